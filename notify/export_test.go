package notify

// PacersLen is the number of endpoints ps remembers.
func PacersLen(ps *Pacers) int {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return len(ps.m)
}
