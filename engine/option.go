package engine

import "github.com/tierbench/tierbench/setting"

// Options are one run's engine options, read by kind (Size, Int, ...).
// Make them with Spec.ResolveOptions, once, where a Config is built.
type Options = setting.Values

// Option finds a declared option by name.
func (s Spec) Option(name string) (setting.Setting, bool) {
	return setting.Find(s.Options, name)
}

// OptionNames lists the declared options, sorted.
func (s Spec) OptionNames() []string {
	return setting.Names(s.Options)
}

// ResolveOptions checks the options given to an engine (what a study
// gave, in any form it accepts) against the Spec and fills in every
// declared Default: the Config.Options of a run. A study's run, `tierbench
// drive`, an engine's own tests and an rbd tier's cluster all get the same
// defaults through it, and no engine writes one twice.
func (s Spec) ResolveOptions(given map[string]string) (Options, error) {
	return setting.Resolve("engine "+s.Name, s.Options, given)
}

// MustResolveOptions is ResolveOptions for options a program writes
// itself (an engine's tests, its Preflight with every default): it panics
// on a mistake.
func (s Spec) MustResolveOptions(given map[string]string) Options {
	o, err := s.ResolveOptions(given)
	if err != nil {
		panic(err)
	}
	return o
}
