package journal

// WireFrame is what encodeFrame encodes for a frame of entries: the
// wire form of decisions, the entries themselves for other kinds.
func WireFrame(entries []Entry) any {
	if len(entries) > 0 && entries[0].Kind == KindDecision {
		return wireEntries(entries, nil)
	}
	return entries
}

// ChannelFull reports whether w's channel is full (Flush's markers
// included).
func ChannelFull(w *Writer) bool { return len(w.ch) == cap(w.ch) }
