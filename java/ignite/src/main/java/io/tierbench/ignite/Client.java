package io.tierbench.ignite;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.SingleWriterRecorder;
import org.apache.ignite.Ignite;
import org.apache.ignite.IgniteCache;
import org.apache.ignite.IgniteDataStreamer;
import org.apache.ignite.Ignition;
import org.apache.ignite.configuration.IgniteConfiguration;

/**
 * A thick client node that activates the cluster if needed and then loads or
 * drives it. Arguments (besides Main.base's discovery, comm-port, work-dir):
 *
 * <pre>
 *   --mode=load  --keys=N --value-size=B              stream keys 0..N-1
 *   --mode=run   --op=put|get|putget --threads=N --warmup-ms=W --duration-ms=D --keys=N --value-size=B
 *                [--preload=K]                         stream keys 0..K-1 first (one JVM loads and runs:
 *                                                      a pod's log then holds one run, ending in done)
 *                [--cut-ms=C]                          a crash run: end the measured window C ms into it,
 *                                                      say so at once (cut), and report the puts (acks)
 *   --mode=read                                        read back the keys standard input lists, one per line
 *   --activate-servers=N                               activate once N servers are up (optional)
 * </pre>
 *
 * Standard output carries one JSON object per line and nothing else:
 *
 * <pre>
 *   {"type":"ready"}                                   joined, cluster active, cache found
 *   {"type":"loaded","records":N,"length_ns":L}        load finished
 *   {"type":"interval","phase":"warmup|measured","index":i,"start_ns":s,"length_ns":l,
 *    "ops":{"put":n},"errors":{"put":e},"p50_ns":..,"p99_ns":..,"max_ns":..}   once a second
 *   {"type":"error","op":"put","message":"..."}        the first failed operation
 *   {"type":"hung","threads":n}                        threads still in an operation 30 s after the end
 *   {"type":"final","phase":"measured","op":"put","ops":n,"errors":e,"length_ns":l,"hist":"base64"}
 *   {"type":"cut","at_ns":t}                           the crash moment, ns since the run began
 *   {"type":"acks","w":[key,id,start_ns,end_ns,...]}   writes a key may hold (see Acks); end -1: unknown
 *   {"type":"first"}                                   read: the cluster answered the first read
 *   {"type":"ids","kv":[key,id,...]}                   read: the id in each present key's value
 *   {"type":"done"}
 * </pre>
 *
 * <p>In a crash run each put's value starts with its id (8 bytes, little
 * endian; fewer when values are shorter), so that a read after the restart
 * names the write that survived. After the cut the client reports and
 * halts without waiting for the operations the crash interrupts.
 *
 * Latencies are nanoseconds from each operation's start (closed loop: a
 * thread starts its next operation when the previous returns), in
 * per-thread recorders swapped once a second.
 */
final class Client {
    private static final long TICK_NS = 1_000_000_000L;
    private static final long STOP_GRACE_MS = 30_000;

    private Client() {
    }

    static int run(Map<String, String> args) throws Exception {
        PrintStream out = Main.realStdout();
        String mode = Main.need(args, "mode");
        IgniteConfiguration cfg = Main.base(args, "tierbench-client");
        cfg.setClientMode(true);
        Ignite ignite;
        try {
            ignite = Ignition.start(cfg);
        } catch (Throwable t) {
            Main.fail("join the cluster as a client", t);
            return 1;
        }
        int code;
        Throwable failure = null;
        try {
            Main.activate(ignite, Integer.parseInt(args.getOrDefault("activate-servers", "1")), 120_000);
            emit(out, "{\"type\":\"ready\"}");
            IgniteCache<Long, byte[]> cache = ignite.cache(Main.CACHE);
            switch (mode) {
                case "activate":
                    code = 0;
                    break;
                case "load":
                    code = load(out, ignite, Main.longArg(args, "keys"), args);
                    break;
                case "run":
                    long preload = Long.parseLong(args.getOrDefault("preload", "0"));
                    code = preload > 0 ? load(out, ignite, preload, args) : 0;
                    if (code == 0) {
                        Client.Run r = new Client.Run(out, cache, args);
                        code = r.go();
                        if (r.cutNs > 0) {
                            // The servers are being killed: nothing to leave.
                            emit(out, "{\"type\":\"done\"}");
                            out.flush();
                            Runtime.getRuntime().halt(code);
                        }
                    }
                    break;
                case "read":
                    // Partitions whose every owner left (a crash of part of
                    // the cluster without backups) stay lost after their
                    // owners rejoin with the data, until reset: the step an
                    // operator takes (control.sh --cache reset_lost_partitions).
                    if (!cache.lostPartitions().isEmpty()) {
                        System.err.println("TIERBENCH resetting " + cache.lostPartitions().size() + " lost partitions");
                        ignite.resetLostPartitions(java.util.Collections.singleton(Main.CACHE));
                    }
                    code = read(out, cache, Integer.parseInt(args.getOrDefault("value-size", "8")));
                    break;
                default:
                    throw new IllegalArgumentException("unknown --mode=" + mode);
            }
        } catch (Throwable t) {
            code = 1;
            failure = t;
        }
        emit(out, "{\"type\":\"done\"}");
        // Leave the cluster cleanly if it lets us, but never hang on it.
        Thread closer = new Thread(() -> ignite.close(), "tierbench-close");
        closer.setDaemon(true);
        closer.start();
        closer.join(10_000);
        out.flush();
        if (failure != null) {
            Main.fail(mode, failure); // last line of stderr: what failed and why
        }
        Runtime.getRuntime().halt(code);
        return code;
    }

    static void emit(PrintStream out, String line) {
        synchronized (out) {
            out.println(line);
            out.flush();
        }
    }

    /** Streams keys 0..keys-1 with values of --value-size bytes. */
    static int load(PrintStream out, Ignite ignite, long keys, Map<String, String> args) {
        int valueSize = Integer.parseInt(Main.need(args, "value-size"));
        byte[] value = new byte[valueSize];
        ThreadLocalRandom.current().nextBytes(value);
        long start = System.nanoTime();
        try (IgniteDataStreamer<Long, byte[]> s = ignite.dataStreamer(Main.CACHE)) {
            for (long k = 0; k < keys; k++) {
                s.addData(k, value);
            }
        }
        emit(out, "{\"type\":\"loaded\",\"records\":" + keys + ",\"length_ns\":" + (System.nanoTime() - start) + "}");
        return 0;
    }

    /**
     * Reads back the keys standard input lists (one per line) in batches and
     * prints, for each key present, the id its value starts with.
     */
    static int read(PrintStream out, IgniteCache<Long, byte[]> cache, int valueSize) throws java.io.IOException {
        java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(System.in));
        java.util.TreeSet<Long> batch = new java.util.TreeSet<>();
        boolean first = true;
        String line;
        do {
            line = in.readLine();
            if (line != null && !line.isEmpty()) {
                batch.add(Long.parseLong(line.trim()));
            }
            if (batch.size() == 512 || line == null && !batch.isEmpty()) {
                Map<Long, byte[]> got = cache.getAll(batch);
                if (first) {
                    emit(out, "{\"type\":\"first\"}");
                    first = false;
                }
                StringBuilder b = new StringBuilder("{\"type\":\"ids\",\"kv\":[");
                boolean any = false;
                for (Map.Entry<Long, byte[]> e : got.entrySet()) {
                    if (e.getValue() == null) {
                        continue;
                    }
                    b.append(any ? "," : "").append(e.getKey()).append(',').append(idOf(e.getValue()));
                    any = true;
                }
                emit(out, b.append("]}").toString());
                batch.clear();
            }
        } while (line != null);
        if (first) {
            // Nothing to read: one read still says when the cluster answered.
            cache.get(0L);
            emit(out, "{\"type\":\"first\"}");
        }
        return 0;
    }

    /** The id a crash run's put wrote into value's first bytes (little endian). */
    static long idOf(byte[] value) {
        long id = 0;
        for (int i = Math.min(8, value.length) - 1; i >= 0; i--) {
            id = id << 8 | (value[i] & 0xff);
        }
        return id;
    }

    /** Writes id into value's first bytes (little endian), as idOf reads it. */
    static void putId(byte[] value, long id) {
        for (int i = 0; i < Math.min(8, value.length); i++) {
            value[i] = (byte) (id >>> (8 * i));
        }
    }

    /** One measured run. */
    static final class Run {
        private final PrintStream out;
        private final IgniteCache<Long, byte[]> cache;
        private final String[] ops;
        private final boolean mixed;
        private final int threads;
        private final long warmupNs;
        private final long durationNs;
        private final long keys;
        private final int valueSize;
        /** A crash run's cut, ns into the measured window; 0: none. */
        final long cutNs;
        /** A crash run's record of puts; null otherwise. */
        private final Acks acks;
        private volatile long begin;

        /** recorders[thread][op] */
        private final SingleWriterRecorder[][] recorders;
        private final Histogram[] recycle;
        private final LongAdder[] errors;
        private final AtomicReference<String> firstError = new AtomicReference<>();
        private volatile boolean stop;

        /** Cumulative histograms and totals per phase (0 warmup, 1 measured) and op. */
        private final Histogram[][] phaseHist;
        private final long[][] phaseErrors;
        private final long[] phaseLength = new long[2];
        private int index;

        Run(PrintStream out, IgniteCache<Long, byte[]> cache, Map<String, String> args) {
            this.out = out;
            this.cache = cache;
            String op = Main.need(args, "op");
            switch (op) {
                case "put":
                    ops = new String[] {"put"};
                    break;
                case "get":
                    ops = new String[] {"get"};
                    break;
                case "putget":
                    ops = new String[] {"put", "get"};
                    break;
                default:
                    throw new IllegalArgumentException("unknown --op=" + op);
            }
            mixed = ops.length == 2;
            threads = Integer.parseInt(Main.need(args, "threads"));
            warmupNs = TimeUnit.MILLISECONDS.toNanos(Long.parseLong(Main.need(args, "warmup-ms")));
            durationNs = TimeUnit.MILLISECONDS.toNanos(Long.parseLong(Main.need(args, "duration-ms")));
            keys = Main.longArg(args, "keys");
            valueSize = Integer.parseInt(Main.need(args, "value-size"));
            cutNs = TimeUnit.MILLISECONDS.toNanos(Long.parseLong(args.getOrDefault("cut-ms", "0")));
            acks = cutNs > 0 ? new Acks() : null;
            if (cutNs < 0 || cutNs >= durationNs) {
                throw new IllegalArgumentException("--cut-ms must fall inside the measured window");
            }
            if (threads < 1 || durationNs <= 0 || warmupNs < 0 || keys < 1 || valueSize < 0) {
                throw new IllegalArgumentException("need threads >= 1, duration > 0, warmup >= 0, keys >= 1");
            }
            recorders = new SingleWriterRecorder[threads][ops.length];
            for (SingleWriterRecorder[] rs : recorders) {
                for (int i = 0; i < rs.length; i++) {
                    rs[i] = new SingleWriterRecorder(Main.LOWEST_NS, Main.HIGHEST_NS, Main.SIG_FIGS);
                }
            }
            recycle = new Histogram[threads * ops.length];
            errors = new LongAdder[ops.length];
            phaseHist = new Histogram[2][ops.length];
            phaseErrors = new long[2][ops.length];
            for (int i = 0; i < ops.length; i++) {
                errors[i] = new LongAdder();
                phaseHist[0][i] = Main.newHistogram();
                phaseHist[1][i] = Main.newHistogram();
            }
        }

        int go() throws InterruptedException {
            List<Thread> workers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                final int id = t;
                Thread th = new Thread(() -> work(id), "tierbench-producer-" + t);
                th.setDaemon(true);
                workers.add(th);
            }
            begin = System.nanoTime();
            for (Thread th : workers) {
                th.start();
            }
            // Tick every second during warmup, exactly at its end, and every
            // second from there, so no interval straddles the two phases
            // (as Go's driver.Run does).
            long total = warmupNs + (cutNs > 0 ? cutNs : durationNs);
            long last = 0;
            long next = TICK_NS;
            boolean warmupDone = warmupNs == 0;
            while (true) {
                long target = next;
                if (!warmupDone && warmupNs < target) {
                    target = warmupNs;
                }
                if (target > total) {
                    target = total;
                }
                sleepUntil(begin + target);
                if (target >= total) {
                    break;
                }
                long now = System.nanoTime() - begin;
                int phase = 1;
                if (!warmupDone) {
                    phase = 0;
                    if (target == warmupNs) {
                        warmupDone = true;
                    }
                }
                collect(phase, last, now);
                last = now;
                if (phase == 0 && warmupDone) {
                    next = warmupNs + TICK_NS;
                } else if (target == next) {
                    next += TICK_NS;
                }
            }
            stop = true;
            if (cutNs > 0) {
                return cut(last);
            }
            long deadline = System.currentTimeMillis() + STOP_GRACE_MS;
            int hung = 0;
            for (Thread th : workers) {
                th.join(Math.max(1, deadline - System.currentTimeMillis()));
                if (th.isAlive()) {
                    hung++;
                }
            }
            collect(warmupDone ? 1 : 0, last, System.nanoTime() - begin);
            if (hung > 0) {
                emit(out, "{\"type\":\"hung\",\"threads\":" + hung + "}");
            }
            finals();
            return 0;
        }

        /**
         * Ends a crash run at its cut: says so at once (tierbench then crashes
         * the servers), closes the last interval, reports the record of puts
         * and the phases. Operations still in flight stay unknown.
         */
        private int cut(long last) {
            long now = System.nanoTime() - begin;
            emit(out, "{\"type\":\"cut\",\"at_ns\":" + now + "}");
            collect(1, last, now);
            acks.dump(out);
            finals();
            return 0;
        }

        /** Prints each phase's totals and histogram per op. */
        private void finals() {
            String[] names = {"warmup", "measured"};
            for (int p = 0; p < 2; p++) {
                for (int i = 0; i < ops.length; i++) {
                    Histogram h = phaseHist[p][i];
                    emit(out, "{\"type\":\"final\",\"phase\":\"" + names[p] + "\",\"op\":\"" + ops[i]
                            + "\",\"ops\":" + h.getTotalCount() + ",\"errors\":" + phaseErrors[p][i]
                            + ",\"length_ns\":" + phaseLength[p] + ",\"hist\":\"" + Main.encode(h) + "\"}");
                }
            }
        }

        private static void sleepUntil(long deadline) throws InterruptedException {
            long left;
            while ((left = deadline - System.nanoTime()) > 0) {
                TimeUnit.NANOSECONDS.sleep(left);
            }
        }

        private void work(int id) {
            ThreadLocalRandom rnd = ThreadLocalRandom.current();
            byte[] value = new byte[valueSize];
            rnd.nextBytes(value);
            SingleWriterRecorder[] rec = recorders[id];
            long mask = valueSize >= 8 ? -1L : (1L << (8 * valueSize)) - 1;
            long writes = 0;
            while (!stop) {
                int op = mixed ? rnd.nextInt(2) : 0;
                long key = rnd.nextLong(keys);
                boolean put = ops[op].equals("put");
                int pending = -1;
                if (acks != null && put) {
                    long wid = ((long) (id + 1) << 40 | ++writes) & mask;
                    putId(value, wid);
                    pending = acks.begin(key, wid, System.nanoTime() - begin);
                }
                long start = System.nanoTime();
                try {
                    if (put) {
                        cache.put(key, value);
                    } else {
                        cache.get(key);
                    }
                    if (pending >= 0) {
                        acks.end(key, pending, true, System.nanoTime() - begin);
                    }
                } catch (Throwable t) {
                    if (pending >= 0) {
                        acks.end(key, pending, false, 0);
                    }
                    if (stop && cutNs > 0) {
                        return; // the crash's: neither counted nor reported
                    }
                    errors[op].increment();
                    if (firstError.compareAndSet(null, String.valueOf(t))) {
                        emit(out, "{\"type\":\"error\",\"op\":\"" + ops[op] + "\",\"message\":" + quote(String.valueOf(t))
                                + "}");
                    }
                    continue;
                }
                long d = System.nanoTime() - start;
                rec[op].recordValue(Math.max(Main.LOWEST_NS, Math.min(Main.HIGHEST_NS, d)));
            }
        }

        /** Closes the interval [start, end) (ns since the beginning) and assigns it to phase. */
        private void collect(int phase, long start, long end) {
            Histogram all = Main.newHistogram();
            long[] n = new long[ops.length];
            long[] e = new long[ops.length];
            for (int i = 0; i < ops.length; i++) {
                Histogram opHist = Main.newHistogram();
                for (int t = 0; t < threads; t++) {
                    int slot = t * ops.length + i;
                    Histogram h = recorders[t][i].getIntervalHistogram(recycle[slot]);
                    opHist.add(h);
                    recycle[slot] = h;
                }
                n[i] = opHist.getTotalCount();
                e[i] = errors[i].sumThenReset();
                all.add(opHist);
                phaseHist[phase][i].add(opHist);
                phaseErrors[phase][i] += e[i];
            }
            phaseLength[phase] += end - start;
            StringBuilder b = new StringBuilder(256);
            b.append("{\"type\":\"interval\",\"phase\":\"").append(phase == 0 ? "warmup" : "measured")
                    .append("\",\"index\":").append(index++)
                    .append(",\"start_ns\":").append(start)
                    .append(",\"length_ns\":").append(end - start);
            b.append(",\"ops\":{");
            for (int i = 0; i < ops.length; i++) {
                b.append(i == 0 ? "" : ",").append('"').append(ops[i]).append("\":").append(n[i]);
            }
            b.append("},\"errors\":{");
            for (int i = 0; i < ops.length; i++) {
                b.append(i == 0 ? "" : ",").append('"').append(ops[i]).append("\":").append(e[i]);
            }
            b.append('}');
            long p50 = 0;
            long p99 = 0;
            long max = 0;
            if (all.getTotalCount() > 0) {
                p50 = all.getValueAtPercentile(50);
                p99 = all.getValueAtPercentile(99);
                max = all.getMaxValue();
            }
            b.append(",\"p50_ns\":").append(p50).append(",\"p99_ns\":").append(p99).append(",\"max_ns\":").append(max)
                    .append('}');
            emit(out, b.toString());
        }
    }

    /** A JSON string literal. */
    static String quote(String s) {
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"':
                    b.append("\\\"");
                    break;
                case '\\':
                    b.append("\\\\");
                    break;
                case '\n':
                    b.append("\\n");
                    break;
                case '\r':
                    b.append("\\r");
                    break;
                case '\t':
                    b.append("\\t");
                    break;
                default:
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
            }
        }
        return b.append('"').toString();
    }
}
