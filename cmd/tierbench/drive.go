package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/tierbench/tierbench/catalog"
	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/driver/stream"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/workload"
)

// passwordEnv holds the target's password for `drive`: a URL on the
// command line would show it to every local user through ps.
const passwordEnv = "TIERBENCH_TARGET_PASSWORD"

// driveOptions are `tierbench drive`'s flags.
type driveOptions struct {
	engine, target, workload string
	params                   []string
	durability               string
	options                  []string
	clients, loaders         int
	warmup, duration         time.Duration
	load                     bool
	wait                     time.Duration
}

func newDriveCmd() *cobra.Command {
	var o driveOptions
	cmd := &cobra.Command{
		Use:   "drive --engine E --target URL --workload W [flags]",
		Short: "Drive one workload against a running server and write the run as JSON lines on standard output",
		Long: `drive is tierbench's driver on its own: it connects to a server tierbench did
not start (--target, without its password, which it reads from
` + passwordEnv + `), optionally loads the workload's data set, runs the
clients closed loop for the warmup and the measured window, and writes
per-second intervals and each op's final HDR histograms as JSON lines on
standard output (the protocol of package driver/stream). A study on
Kubernetes runs it as the load generator's Job and reads its pod's log;
locally, its output reads back into the same results as a run's.`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return drive(cmd.Context(), catalog.Default(), o, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.engine, "engine", "", "engine of the server: postgres, mariadb, redis, opensearch, elasticsearch")
	f.StringVar(&o.target, "target", "", "the server's URL without a password (postgres://user@host:port/db)")
	f.StringVar(&o.workload, "workload", "", "workload name (tierbench workloads)")
	f.StringArrayVar(&o.params, "set", nil, "a workload parameter, name=value (repeatable)")
	f.StringVar(&o.durability, "durability", "", "the durability mode the client applies, for an engine whose client sets it (opensearch: the index's translog durability); default the engine's first mode")
	f.StringArrayVar(&o.options, "option", nil, "an engine option the client applies, name=value (opensearch: shards, replicas, refresh_interval; repeatable)")
	f.IntVar(&o.clients, "clients", 8, "concurrent clients")
	f.DurationVar(&o.warmup, "warmup", 5*time.Second, "warmup before the measured window")
	f.DurationVar(&o.duration, "duration", 30*time.Second, "measured window")
	f.BoolVar(&o.load, "load", false, "load the workload's data set first (drops and recreates its tables)")
	f.IntVar(&o.loaders, "loaders", 4, "parallel sessions of the load")
	f.DurationVar(&o.wait, "wait", 0, "keep trying to connect for this long (a load generator started with its server, as rendered objects are)")
	return cmd
}

// driveSetup is what drive checked before connecting.
type driveSetup struct {
	eng engine.Engine
	w   workload.Workload
	cfg engine.Config // the target with its password, durability and options
}

// check validates the flags and the environment; every problem is the
// user's to fix (exit 2), and nothing has been contacted yet.
func (o driveOptions) check(cat *catalog.Catalog) (driveSetup, error) {
	var s driveSetup
	eng, ok := cat.Engine(o.engine)
	if !ok {
		return s, fmt.Errorf("--engine %q: not an engine; one of %s", o.engine, strings.Join(cat.EngineNames(), ", "))
	}
	schemes := eng.Spec().TargetSchemes
	if len(schemes) == 0 {
		return s, fmt.Errorf("--engine %s: drive connects to a running server, and %s has none to connect to", o.engine, o.engine)
	}
	u, err := url.Parse(o.target)
	if err != nil || o.target == "" || !slices.Contains(schemes, u.Scheme) {
		return s, fmt.Errorf("--target %q: want the server's URL, %s://user@host:port/...", engine.RedactTarget(o.target), schemes[0])
	}
	if _, has := u.User.Password(); has || u.Query().Has("password") {
		return s, fmt.Errorf("--target carries a password, which every local user could read through ps: give the URL without it and the password in %s", passwordEnv)
	}
	if pw := os.Getenv(passwordEnv); pw != "" {
		u.User = url.UserPassword(u.User.Username(), pw)
	}
	cfg, err := o.engineConfig(eng.Spec())
	if err != nil {
		return s, err
	}
	spec, ok := cat.Workload(o.workload)
	if !ok {
		return s, fmt.Errorf("--workload %q: not a workload; one of %s", o.workload, strings.Join(cat.WorkloadNames(), ", "))
	}
	if spec.Driver != "" {
		return s, fmt.Errorf("--workload %s runs only with driver %s, not tierbench's own", o.workload, spec.Driver)
	}
	if es := eng.Spec(); spec.Model != "" && len(es.Models) > 0 && !es.Serves(spec.Model) {
		return s, fmt.Errorf("--workload %s needs the %s data model, which engine %s does not serve; see tierbench workloads", o.workload, spec.Model, o.engine)
	}
	params, err := nameValues("--set", o.params, spec.ParamNames())
	if err != nil {
		return s, err
	}
	w, err := spec.Build(params)
	if err != nil {
		return s, fmt.Errorf("--set: %w", err)
	}
	maxClients, why := eng.Spec().MaxClients, eng.Spec().MaxClientsWhy
	if lim, ok := w.(workload.ClientLimiter); ok {
		if n, wwhy := lim.MaxClients(); maxClients == 0 || n < maxClients {
			maxClients, why = n, wwhy
		}
	}
	switch {
	case o.clients < 1:
		return s, fmt.Errorf("--clients %d: want at least 1", o.clients)
	case maxClients > 0 && o.clients > maxClients:
		return s, fmt.Errorf("--clients %d: at most %d: %s", o.clients, maxClients, why)
	case o.loaders < 1:
		return s, fmt.Errorf("--loaders %d: want at least 1", o.loaders)
	case o.duration <= 0 || o.warmup < 0:
		return s, fmt.Errorf("--duration %v, --warmup %v: want a positive window and a warmup of 0 or more", o.duration, o.warmup)
	}
	cfg.Target = u.String()
	return driveSetup{eng: eng, w: w, cfg: cfg}, nil
}

// engineConfig is the durability and options the client applies (an
// engine whose server holds them ignores them), the options resolved with
// the engine's defaults as a study's run resolves them.
func (o driveOptions) engineConfig(spec engine.Spec) (engine.Config, error) {
	cfg := engine.Config{Durability: engine.Durability(o.durability)}
	var modes []string
	for _, m := range spec.Modes {
		modes = append(modes, string(m.Durability))
	}
	switch {
	case o.durability == "" && len(spec.Modes) > 0:
		cfg.Durability = spec.Modes[0].Durability
	case o.durability != "" && !slices.Contains(modes, o.durability):
		return cfg, fmt.Errorf("--durability %q: engine %s has %s", o.durability, spec.Name, strings.Join(modes, ", "))
	}
	opts, err := nameValues("--option", o.options, spec.OptionNames())
	if err != nil {
		return cfg, err
	}
	for name, text := range opts {
		st, _ := spec.Option(name)
		if _, err := st.Parse(text); err != nil {
			return cfg, fmt.Errorf("--option %w", err) // in the flag's words
		}
	}
	cfg.Options, err = spec.ResolveOptions(opts)
	return cfg, err
}

// nameValues reads repeated name=value flags, each name one of names and
// given once.
func nameValues(flag string, given, names []string) (map[string]string, error) {
	out := map[string]string{}
	for _, g := range given {
		name, value, ok := strings.Cut(g, "=")
		if !ok || !slices.Contains(names, name) {
			return nil, fmt.Errorf("%s %q: want name=value with name one of %s", flag, g, strings.Join(names, ", "))
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("%s %s is given twice; give each name once", flag, name)
		}
		out[name] = value
	}
	return out, nil
}

// openWaiting connects to the target, trying again every second for up
// to wait: a server started at the same time (a pod of rendered objects)
// is not ready at once.
func openWaiting(ctx context.Context, s driveSetup, wait time.Duration) (engine.DB, error) {
	deadline := time.Now().Add(wait)
	for {
		db, err := s.eng.Open(ctx, s.cfg)
		if err == nil || !notYet(err) || !time.Now().Before(deadline) || ctx.Err() != nil {
			return db, err
		}
		select {
		case <-ctx.Done():
			return nil, errors.Join(err, ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

// notYet reports whether err is a server not listening yet (refused,
// reset, not resolvable, timed out): worth another try, unlike a refusal
// of what was asked.
func notYet(err error) bool {
	var ne net.Error // a dial's, a timeout's, a name's not resolving yet
	return errors.As(err, &ne) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// drive runs the workload against the target and writes the run to out.
func drive(ctx context.Context, cat *catalog.Catalog, o driveOptions, out io.Writer) (err error) {
	s, err := o.check(cat)
	if err != nil {
		return badInput(err)
	}
	db, err := openWaiting(ctx, s, o.wait)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := db.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close the connections: %w", cerr)
		}
	}()
	sw := stream.NewWriter(out, s.w.Ops())
	sw.Ready()
	if o.load {
		stats, err := s.w.Load(ctx, db, o.loaders)
		if err != nil {
			return fmt.Errorf("load: %w", err)
		}
		sw.Loaded(stats.Records, int64(stats.Duration))
	}
	clients, closeAll, err := workload.NewClients(ctx, db, s.w, o.clients)
	if err != nil {
		return err
	}
	res, runErr := driver.Run(ctx, driver.Config{Ops: s.w.Ops(), Warmup: o.warmup, Duration: o.duration,
		Lanes: driver.DefaultLanes(), OnTick: sw.Interval}, clients)
	runErr = errors.Join(runErr, closeAll())
	if werr := sw.Finish(res, runErr); werr != nil {
		return errors.Join(runErr, fmt.Errorf("write the run: %w", werr))
	}
	return runErr
}
