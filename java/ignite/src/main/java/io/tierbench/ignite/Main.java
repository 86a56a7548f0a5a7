package io.tierbench.ignite;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.HdrHistogram.Histogram;
import org.apache.ignite.Ignite;
import org.apache.ignite.Ignition;
import org.apache.ignite.cache.CacheAtomicityMode;
import org.apache.ignite.cluster.ClusterState;
import org.apache.ignite.configuration.CacheConfiguration;
import org.apache.ignite.configuration.DataRegionConfiguration;
import org.apache.ignite.configuration.DataStorageConfiguration;
import org.apache.ignite.configuration.IgniteConfiguration;
import org.apache.ignite.configuration.WALMode;
import org.apache.ignite.spi.communication.tcp.TcpCommunicationSpi;
import org.apache.ignite.spi.discovery.tcp.TcpDiscoverySpi;
import org.apache.ignite.spi.discovery.tcp.ipfinder.vm.TcpDiscoveryVmIpFinder;

/**
 * tierbench's Ignite launcher. Commands:
 *
 * <pre>
 *   server --consistent-id=ID --disco-port=P --comm-port=P --discovery=127.0.0.1:P,... --work-dir=D
 *          --persistence=true|false [--storage-path=D --wal-path=D --wal-archive-path=D --wal-mode=FSYNC
 *          --wal-segment-size=B --wal-archive-size=B] --region-size=B --backups=N --atomicity=ATOMIC|TRANSACTIONAL
 *          [--activate-servers=N] [--local-host=ADDR]
 *   client --mode=activate|load|run ... (see Client)
 *   histtest   prints one encoded histogram (values 1..1000 us) for the Go side's decoding test
 * </pre>
 *
 * Everything binds to 127.0.0.1 (or, on a cluster, to --local-host: the
 * pod's address); discovery uses a static IP finder (no multicast). A server prints "TIERBENCH READY consistentId" on stdout once
 * it has started (and, with --activate-servers, once it has seen that many
 * servers, activated the cluster and found the cache).
 */
public final class Main {
    /** The one cache the workloads use. */
    static final String CACHE = "tierbench";
    /** Histogram geometry, the same as Go's hist package: 1 ns .. 60 s, 3 digits. */
    static final long LOWEST_NS = 1;
    static final long HIGHEST_NS = 60_000_000_000L;
    static final int SIG_FIGS = 3;

    private Main() {
    }

    public static void main(String[] argv) throws Exception {
        if (argv.length == 0) {
            System.err.println("usage: Main server|client|histtest --key=value ...");
            System.exit(2);
        }
        Map<String, String> args = parse(Arrays.copyOfRange(argv, 1, argv.length));
        switch (argv[0]) {
            case "server":
                server(args);
                break;
            case "client":
                System.exit(Client.run(args));
                break;
            case "histtest":
                histTest();
                break;
            default:
                System.err.println("unknown command " + argv[0]);
                System.exit(2);
        }
    }

    /** Parses --key=value arguments. */
    static Map<String, String> parse(String[] argv) {
        Map<String, String> m = new HashMap<>();
        for (String a : argv) {
            if (!a.startsWith("--") || !a.contains("=")) {
                throw new IllegalArgumentException("argument " + a + " is not --key=value");
            }
            int eq = a.indexOf('=');
            m.put(a.substring(2, eq), a.substring(eq + 1));
        }
        return m;
    }

    static String need(Map<String, String> args, String key) {
        String v = args.get(key);
        if (v == null || v.isEmpty()) {
            throw new IllegalArgumentException("missing --" + key);
        }
        return v;
    }

    static long longArg(Map<String, String> args, String key) {
        return Long.parseLong(need(args, key));
    }

    /**
     * The settings servers and clients share: one address (loopback unless
     * --local-host names the pod's own on a cluster), static discovery, no
     * extras.
     */
    static IgniteConfiguration base(Map<String, String> args, String name) {
        String host = args.getOrDefault("local-host", "127.0.0.1");
        IgniteConfiguration cfg = new IgniteConfiguration();
        cfg.setIgniteInstanceName(name);
        cfg.setLocalHost(host);
        cfg.setWorkDirectory(need(args, "work-dir"));
        cfg.setPeerClassLoadingEnabled(false);
        cfg.setMetricsLogFrequency(0);
        // No thin-client/JDBC listener and no REST/binary connector: only
        // discovery and communication ports, both given by tierbench.
        cfg.setClientConnectorConfiguration(null);
        cfg.setConnectorConfiguration(null);
        // Four JVMs share two cores under full load: be patient before
        // declaring a node dead.
        cfg.setFailureDetectionTimeout(30_000);
        cfg.setClientFailureDetectionTimeout(30_000);

        List<String> addrs = new ArrayList<>(Arrays.asList(need(args, "discovery").split(",")));
        TcpDiscoveryVmIpFinder finder = new TcpDiscoveryVmIpFinder();
        finder.setAddresses(addrs);
        TcpDiscoverySpi disco = new TcpDiscoverySpi();
        disco.setIpFinder(finder);
        disco.setLocalAddress(host);
        if (args.containsKey("disco-port")) {
            disco.setLocalPort(Integer.parseInt(args.get("disco-port")));
            disco.setLocalPortRange(0);
        }
        cfg.setDiscoverySpi(disco);

        TcpCommunicationSpi comm = new TcpCommunicationSpi();
        comm.setLocalAddress(host);
        comm.setLocalPort(Integer.parseInt(need(args, "comm-port")));
        comm.setLocalPortRange(0);
        // 0: the OS's (autotuned) socket buffers instead of Ignite's fixed
        // 32 KiB. On loopback (MTU 64 KiB) a 32 KiB buffer is smaller than
        // one TCP segment, and under load Linux then stalls a connection
        // for ~1 s at a time (seen on a 6.18 kernel: 128 producers fell
        // from ~50k to ~150 puts/s with every put taking ~1 s).
        comm.setSocketReceiveBuffer(0);
        comm.setSocketSendBuffer(0);
        cfg.setCommunicationSpi(comm);
        return cfg;
    }

    static void server(Map<String, String> args) {
        String id = need(args, "consistent-id");
        IgniteConfiguration cfg = base(args, id);
        cfg.setConsistentId(id);

        DataStorageConfiguration ds = new DataStorageConfiguration();
        DataRegionConfiguration region = ds.getDefaultDataRegionConfiguration();
        long regionSize = longArg(args, "region-size");
        region.setMaxSize(regionSize);
        region.setInitialSize(Math.min(regionSize, 256L << 20));
        boolean persistence = Boolean.parseBoolean(need(args, "persistence"));
        region.setPersistenceEnabled(persistence);
        if (persistence) {
            ds.setStoragePath(need(args, "storage-path"));
            ds.setWalPath(need(args, "wal-path"));
            // The same folder as wal-path turns archiving off: segments are
            // written there with absolute indexes and never copied.
            ds.setWalArchivePath(need(args, "wal-archive-path"));
            ds.setWalMode(WALMode.valueOf(need(args, "wal-mode")));
            ds.setWalSegmentSize((int) longArg(args, "wal-segment-size"));
            ds.setMaxWalArchiveSize(longArg(args, "wal-archive-size"));
        }
        cfg.setDataStorageConfiguration(ds);

        CacheConfiguration<Long, byte[]> cache = new CacheConfiguration<>(CACHE);
        cache.setBackups(Integer.parseInt(need(args, "backups")));
        cache.setAtomicityMode(CacheAtomicityMode.valueOf(need(args, "atomicity")));
        cfg.setCacheConfiguration(cache);

        PrintStream out = realStdout();
        Ignite ignite;
        try {
            ignite = Ignition.start(cfg);
        } catch (Throwable t) {
            fail("start node " + id, t);
            return;
        }
        try {
            int servers = Integer.parseInt(args.getOrDefault("activate-servers", "0"));
            if (servers > 0) {
                activate(ignite, servers, 120_000);
            }
        } catch (Throwable t) {
            fail("activate the cluster from " + id, t);
        }
        out.println("TIERBENCH READY " + id);
        out.flush();
        // Ignite's own threads keep the JVM alive; SIGTERM runs its shutdown hook.
    }

    /**
     * Prints t's stack trace and then, as the last line, what failed with
     * every cause on one line (what tierbench shows from the log's tail),
     * and halts.
     */
    static void fail(String what, Throwable t) {
        t.printStackTrace();
        StringBuilder b = new StringBuilder("TIERBENCH FAILED to ").append(what).append(": ").append(t);
        Throwable seen = t;
        for (Throwable c = t.getCause(); c != null && c != seen; seen = c, c = c.getCause()) {
            b.append("; caused by: ").append(c);
        }
        System.err.println(b);
        System.err.flush();
        Runtime.getRuntime().halt(1);
    }

    /**
     * Waits until `servers` server nodes are in the topology, activates the
     * cluster (which, with persistence, sets the baseline to them) and waits
     * for the cache.
     */
    static void activate(Ignite ignite, int servers, long timeoutMs) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (ignite.cluster().forServers().nodes().size() < servers) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("only " + ignite.cluster().forServers().nodes().size() + " of "
                        + servers + " server nodes joined within " + timeoutMs + " ms");
            }
            Thread.sleep(50);
        }
        if (ignite.cluster().state() != ClusterState.ACTIVE) {
            ignite.cluster().state(ClusterState.ACTIVE);
        }
        while (ignite.cache(CACHE) == null) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("cache " + CACHE + " did not start within " + timeoutMs + " ms");
            }
            Thread.sleep(50);
        }
    }

    /**
     * Returns the process's real standard output and sends System.out to
     * standard error, so Ignite's console lines never mix with the lines
     * tierbench reads.
     */
    static PrintStream realStdout() {
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        System.setOut(System.err);
        return out;
    }

    static Histogram newHistogram() {
        return new Histogram(LOWEST_NS, HIGHEST_NS, SIG_FIGS);
    }

    /** The standard compressed V2 encoding, base64: what Go's hist.Decode reads. */
    static String encode(Histogram h) {
        java.nio.ByteBuffer buf = java.nio.ByteBuffer.allocate(h.getNeededByteBufferCapacity());
        int n = h.encodeIntoCompressedByteBuffer(buf);
        return Base64.getEncoder().encodeToString(Arrays.copyOf(buf.array(), n));
    }

    static void histTest() {
        Histogram h = newHistogram();
        for (long us = 1; us <= 1000; us++) {
            h.recordValue(us * 1000);
        }
        h.recordValue(HIGHEST_NS);
        System.out.println(encode(h));
        System.out.flush();
    }
}
