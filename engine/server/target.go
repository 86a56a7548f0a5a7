package server

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/tierbench/tierbench/engine"
)

// Target checks engine.Config.Target for a server engine: a URL whose
// scheme is one of schemes, its Spec's TargetSchemes (the first is the one
// errors name, "postgres" for postgres:// and postgresql://). The engine then hands the URL to its
// driver's own parser, which knows the defaults (ports, users) and the
// driver's parameters. Errors never show the password (engine.RedactTarget).
func Target(engineName, target string, schemes ...string) (*url.URL, error) {
	if len(schemes) == 0 {
		return nil, fmt.Errorf("engine %s cannot connect to a server it did not start (no target)", engineName)
	}
	u, err := url.Parse(target)
	if err != nil {
		// url.Parse's error quotes the whole URL, password included.
		return nil, fmt.Errorf("engine %s: target %s is not a URL (want %s://user:password@host:port/...)",
			engineName, engine.RedactTarget(target), schemes[0])
	}
	if !slices.Contains(schemes, strings.ToLower(u.Scheme)) {
		return nil, fmt.Errorf("engine %s needs a %s:// target, got %s", engineName, schemes[0], engine.RedactTarget(target))
	}
	if u.Opaque != "" {
		return nil, fmt.Errorf("engine %s: target %s: want %s://host... (with the two slashes)",
			engineName, engine.RedactTarget(target), schemes[0])
	}
	return u, nil
}

// OpenTarget opens a server engine on a server tierbench did not start
// (engine.Config.Target), where it starts, places and configures nothing:
// it checks the URL against spec (Target), has parse turn it into the
// driver's configuration (the driver's defaults and parameters), and
// connect open the DB with it. Its errors name the target without its
// password: "target URL: ..." for a URL the driver refuses, "connect to
// target URL: ..." for a server that does not answer.
func OpenTarget[C any](ctx context.Context, spec engine.Spec, target string,
	parse func(*url.URL) (C, error), connect func(context.Context, C) (engine.DB, error)) (engine.DB, error) {
	u, err := Target(spec.Name, target, spec.TargetSchemes...)
	if err != nil {
		return nil, err
	}
	redacted := engine.RedactTarget(target)
	c, err := parse(u)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", redacted, err)
	}
	db, err := connect(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("connect to target %s: %w", redacted, err)
	}
	return db, nil
}
