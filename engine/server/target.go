package server

import (
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
