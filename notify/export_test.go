package notify

// PacersLen is the number of endpoints ps remembers.
func PacersLen(ps *Pacers) int { return ps.m.Len() }
