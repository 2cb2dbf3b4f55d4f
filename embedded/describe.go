package embedded

// Describe says what the server serves, for a banner: its faults, then
// "; TLS" when it speaks TLS and "; password required of user NAME" when
// it requires a password (never the password itself).
func (s *Server) Describe() string {
	d := s.cfg.Faults.String()
	if s.cfg.TLS != nil {
		d += "; TLS"
	}
	if s.cfg.Password != "" {
		user := s.cfg.User
		if user == "" {
			user = "default"
		}
		d += "; password required of user " + user
	}
	return d
}
