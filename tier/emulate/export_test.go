package emulate

// BusyError is the error Close gives when the helper outlives its wait
// with files still open on the mount: it names their holders.
func (s *Server) BusyError() error { return s.busy() }
