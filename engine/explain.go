package engine

// Explain passes err through s's Explainer, if s has one.
func Explain(s Session, err error) error {
	if x, ok := s.(Explainer); ok && err != nil {
		return x.Explain(err)
	}
	return err
}
