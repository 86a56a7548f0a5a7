package io.tierbench.ignite;

import java.io.PrintStream;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The record of puts a crash run keeps, for tierbench's check of
 * acknowledged writes after the cluster restarted (Go's workload/acklog
 * applies the rule; this class only keeps what it needs). Each put is named
 * by an id written into its value's first 8 bytes; per key it keeps the
 * writes the key may hold after a crash: it drops a write once an
 * acknowledged write of the same key began after it ended, and only while
 * none of the key's writes is in flight (their writers hold indexes into
 * the list), as acklog does.
 *
 * <p>Times are nanoseconds since the run's beginning; an end of -1 is an
 * outcome the client never learnt.
 */
final class Acks {
    static final long UNKNOWN = -1;
    /** Writes per "acks" line. */
    private static final int PER_LINE = 1024;

    private static final class Slot {
        /** Start of the latest-starting acknowledged write; -1 before any. */
        long latest = -1;
        int inflight;
        /** Triples id, start, end; n of them. */
        long[] ws = new long[3 * 4];
        int n;
    }

    private final Map<Long, Slot> slots = new ConcurrentHashMap<>();

    /** Notes that key is being written with id at start; returns the index End takes. */
    int begin(long key, long id, long start) {
        Slot s = slots.computeIfAbsent(key, k -> new Slot());
        synchronized (s) {
            if (3 * (s.n + 1) > s.ws.length) {
                s.ws = java.util.Arrays.copyOf(s.ws, s.ws.length * 2);
            }
            int i = s.n++;
            s.ws[3 * i] = id;
            s.ws[3 * i + 1] = start;
            s.ws[3 * i + 2] = UNKNOWN;
            s.inflight++;
            return i;
        }
    }

    /** Notes the outcome of the write at index: acknowledged at end (ok), or unknown. */
    void end(long key, int index, boolean ok, long end) {
        Slot s = slots.get(key);
        synchronized (s) {
            s.inflight--;
            if (ok) {
                s.ws[3 * index + 2] = end;
                if (s.ws[3 * index + 1] > s.latest) {
                    s.latest = s.ws[3 * index + 1];
                }
            }
            if (s.inflight > 0) {
                return;
            }
            int keep = 0;
            for (int i = 0; i < s.n; i++) {
                long e = s.ws[3 * i + 2];
                if (e == UNKNOWN || e >= s.latest) {
                    System.arraycopy(s.ws, 3 * i, s.ws, 3 * keep, 3);
                    keep++;
                }
            }
            s.n = keep;
        }
    }

    /**
     * Prints every kept write as {"type":"acks","w":[key,id,start,end,...]}
     * lines of up to PER_LINE writes.
     */
    void dump(PrintStream out) {
        StringBuilder b = new StringBuilder();
        int inLine = 0;
        for (Map.Entry<Long, Slot> e : slots.entrySet()) {
            Slot s = e.getValue();
            synchronized (s) {
                for (int i = 0; i < s.n; i++) {
                    b.append(inLine == 0 ? "{\"type\":\"acks\",\"w\":[" : ",");
                    b.append(e.getKey()).append(',').append(s.ws[3 * i]).append(',').append(s.ws[3 * i + 1]).append(',')
                            .append(s.ws[3 * i + 2]);
                    if (++inLine == PER_LINE) {
                        Client.emit(out, b.append("]}").toString());
                        b.setLength(0);
                        inLine = 0;
                    }
                }
            }
        }
        if (inLine > 0) {
            Client.emit(out, b.append("]}").toString());
        }
    }
}
