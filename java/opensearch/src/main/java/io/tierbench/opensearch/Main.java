package io.tierbench.opensearch;

import java.io.IOException;

import org.codelibs.opensearch.runner.OpenSearchRunner;

/**
 * Starts one OpenSearch node through codelibs' OpenSearchRunner, taking the
 * runner's own arguments (-basePath, -confPath, -dataPath, -logsPath,
 * -numOfNode, -baseHttpPort, -clusterName).
 *
 * <p>It differs from the runner's main in two ways, which is why it exists:
 * a node that fails to start prints why (the runner's main exits with status
 * 1 and nothing said, so a taken port or a full disk left no trace), and the
 * HTTP port is exactly -baseHttpPort + 1 (the runner's main skips to the next
 * port when that one answers, and refuses ports above 9299), so a port that
 * is taken fails the start instead of reaching someone else's server.
 */
public final class Main {
    private Main() {
    }

    public static void main(final String[] args) throws InterruptedException {
        final OpenSearchRunner runner = new OpenSearchRunner();
        runner.setMaxHttpPort(-1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                runner.close();
            } catch (final IOException e) {
                System.err.println("tierbench: closing the node: " + e);
            }
        }));
        try {
            runner.build(args);
        } catch (final Throwable t) {
            t.printStackTrace();
            // The cause chain once more, last, where a log's tail shows it.
            System.err.println("tierbench: the node did not start:");
            for (Throwable c = t; c != null; c = c.getCause()) {
                System.err.println("  " + c);
            }
            System.exit(1);
        }
        while (!runner.isClosed()) {
            Thread.sleep(1000);
        }
    }
}
