package engine

import "github.com/tierbench/tierbench/setting"

// Options are one run's engine options, read by kind (Size, Int, ...).
// Make them with Spec.ResolveOptions.
type Options = setting.Values

// Option finds a declared option by name.
func (s Spec) Option(name string) (setting.Setting, bool) {
	return setting.Find(s.Options, name)
}

// OptionNames lists the declared options, sorted.
func (s Spec) OptionNames() []string {
	return setting.Names(s.Options)
}

// ResolveOptions checks the options given to an engine (Config.Options:
// what the study gave) against the Spec and fills in every declared
// Default. A study run, an engine's own tests and a target all get the
// same defaults through it, and no engine writes one twice.
func (s Spec) ResolveOptions(given map[string]string) (Options, error) {
	return setting.Resolve("engine "+s.Name, s.Options, given)
}
