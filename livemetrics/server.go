package livemetrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// PublicFlag is the flag that lets CheckAddress take an address that is
// not loopback; named in its refusals.
const PublicFlag = "--metrics-public"

// CheckAddress checks a --metrics address, host:port, without binding it:
// the host must be a loopback address (127.0.0.0/8, ::1) or localhost,
// unless public is set, since the figures, the study's name and its
// placements would otherwise be served to the network. A name other than
// localhost is not looked up: it is refused unless public. Port 0 picks a
// free port.
func CheckAddress(addr string, public bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--metrics %q: want HOST:PORT, such as 127.0.0.1:9464", addr)
	}
	// Digits only: Atoi would take "+80", which no one means as a port.
	if n, err := strconv.Atoi(port); err != nil || strings.Trim(port, "0123456789") != "" || n > 65535 {
		return fmt.Errorf("--metrics %q: the port must be a number from 0 to 65535 (0 picks a free one)", addr)
	}
	if public || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	what := "is not a loopback address"
	if host == "" {
		what = "listens on every address"
	}
	return fmt.Errorf("--metrics %q %s: it would serve the study's figures to the network; use 127.0.0.1:%s, or add %s to mean it",
		addr, what, port, PublicFlag)
}

// Server serves Metrics over HTTP at /metrics until Close.
type Server struct {
	srv    *http.Server
	ln     net.Listener
	done   chan struct{}
	closed sync.Once
	err    error
}

// Serve binds addr (checked by CheckAddress first) and serves m there.
func Serve(addr string, m *Metrics) (*Server, error) {
	reg := prometheus.NewRegistry()
	if err := reg.Register(m); err != nil {
		return nil, fmt.Errorf("live metrics: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintln(w, "tierbench: the running study's metrics are at /metrics")
	})
	s := &Server{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, ln: ln, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		s.srv.Serve(ln) // returns when closed
	}()
	return s, nil
}

// Addr is the address served, with the port picked when it was 0.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops serving: the port is closed when it returns. A scrape in
// progress is given a second to finish. It may be called more than once.
func (s *Server) Close() error {
	s.closed.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		err := s.srv.Shutdown(ctx)
		if errors.Is(err, context.DeadlineExceeded) {
			err = s.srv.Close()
		}
		<-s.done
		if err != nil {
			s.err = fmt.Errorf("live metrics: %w", err)
		}
	})
	return s.err
}
