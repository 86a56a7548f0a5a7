package engine

// Explainer is an optional Session ability of server engines: it turns an
// error that came back on the session's connection into one a user can act
// on, adding what only the engine knows: that its server died, with the
// tail of its log; what the log says when the server dropped the
// connection; that a driver's "table is full" means the tier is out of
// space. The error keeps its text and wraps the original. Sessions apply it
// to their own data models' errors; workloads that use a session's
// connection directly (SQL) pass their errors through it.
type Explainer interface {
	Explain(err error) error
}

// Explain passes err through s's Explainer, if s has one.
func Explain(s Session, err error) error {
	if x, ok := s.(Explainer); ok && err != nil {
		return x.Explain(err)
	}
	return err
}
