// Package flap damps alerts that keep firing and resolving, without ever
// dropping them.
//
// Every alert fingerprint has a History: the times at which it changed
// state (firing → resolved or resolved → firing), oldest first, as
// History.Record keeps them — a firing that started before the last resolve
// resumes the firing that resolve ended (the resolve was Alertmanager's,
// not a change of the alert), and a resolve that ended before the last
// firing started is a late report of an earlier one. Damp looks
// at the transitions inside the configured window (default 1h), the one
// being decided included:
//
//   - more than Threshold (default 4) transitions make the alert flapping:
//     a page is downgraded one tier to a ticket, with the reason
//     "flapping: 5 transitions in 1h"; a ticket stays a ticket; nothing is
//     ever downgraded to none, so a flapping alert is always seen by a human;
//   - Verdict.HoldResolveUntil tells a caller that can hold resolves how
//     long (CoolDown, default 10m) to wait for the alert to fire again; the
//     router's dispatch core sends resolves at once instead (holding one
//     safely needs a swept due-time record, see docs/policies.md) and damps
//     the re-fire that follows within CoolDown of a paged resolve;
//   - once the alert has made no transition for a whole window it is stable
//     again, its transitions have aged out of the window, and it pages as
//     its policies decide.
//
// The package is pure: no I/O and no clock of its own; the caller passes
// now. The history encodes to short strings (one per transition) so that a
// store can keep it as a list and append, trim and read it in one round
// trip (RPUSH, LTRIM, EXPIRE and LRANGE in one pipeline), or as one string
// (History.String and Parse).
package flap
