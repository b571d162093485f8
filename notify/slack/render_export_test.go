package slack

// Esc and Unesc are esc and unescMrkdwn, for the fuzz targets' oracles:
// an alert value as the card prints it escaped, a link's URL as written.
var (
	Esc   = esc
	Unesc = unescMrkdwn
)
