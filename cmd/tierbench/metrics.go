package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tierbench/tierbench/livemetrics"
	"github.com/tierbench/tierbench/runner"
)

// metricsFlags are run's --metrics ADDR and --metrics-public: serve the
// running study's metrics for Prometheus (package livemetrics), on
// loopback unless --metrics-public says otherwise.
type metricsFlags struct {
	addr   string
	public bool
	srv    *livemetrics.Server
}

func (f *metricsFlags) bind(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.addr, "metrics", "", "serve the running study's metrics for Prometheus at http://ADDR/metrics (HOST:PORT, loopback unless --metrics-public; port 0 picks one) until the study ends")
	cmd.Flags().BoolVar(&f.public, "metrics-public", false, "let --metrics listen on an address that is not loopback, which serves the study's figures to the network")
}

// serve checks the flags and binds the address, before anything else is
// made: a refusal (exit 2) writes nothing. It returns the runner's live
// view, nil without --metrics.
func (f *metricsFlags) serve(cmd *cobra.Command) (runner.Live, error) {
	switch {
	case cmd.Flags().Changed("metrics") && strings.TrimSpace(f.addr) == "":
		return nil, badInput(errors.New("--metrics needs an address to serve at, such as 127.0.0.1:9464"))
	case f.addr == "" && f.public:
		return nil, badInput(errors.New("--metrics-public needs --metrics ADDR"))
	case f.addr == "":
		return nil, nil
	}
	if err := livemetrics.CheckAddress(f.addr, f.public); err != nil {
		return nil, badInput(err)
	}
	m := livemetrics.New()
	srv, err := livemetrics.Serve(f.addr, m)
	if err != nil {
		return nil, badInput(fmt.Errorf("%w; give a free port, or 0 to have one picked", err))
	}
	f.srv = srv
	fmt.Fprintf(os.Stderr, "live metrics: http://%s/metrics until the study ends\n", srv.Addr())
	return m, nil
}

// stop stops serving, if serve started: when run returns (the study
// ended, or Ctrl-C stopped it), the port is closed.
func (f *metricsFlags) stop() {
	if f.srv == nil {
		return
	}
	if err := f.srv.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "warning:", err)
	}
}
