package store

import (
	"context"
	"strconv"
	"time"
)

// IncidentStep is one step of an incident's lifecycle at one integration.
// The lifecycle (docs/architecture.md, "Incident state machine"):
//
//	closed ──Join──▶ opening ──Opened──▶ open ──Leave(last)──▶ resolving ──Resolved──▶ closed
//	   ▲               │ Abort                │ Join/Leave(not last)   │ Abort
//	   └───────────────┘                      └── stays open           └──▶ open
//
// opening and resolving are leases held by the one sender (Token) that
// sends the opening message (PagerDuty trigger, Slack parent) or the
// closing one (PagerDuty resolve, Slack parent edit). A lease ends at its
// deadline: a sender that dies mid-send never blocks the incident longer,
// and an expired lease reads as closed, so the next firing opens the
// incident again (a repeated trigger is folded by PagerDuty; a lost one
// would be a lost page).
type IncidentStep string

// The steps.
const (
	// StepJoin adds firing members. Outcome OutcomeOpening (the caller holds
	// the opening lease and must send the opening message, then Opened or
	// Abort), OutcomeOpen (already open: no opening message), or OutcomeBusy
	// (another sender holds a lease; nothing changed).
	StepJoin IncidentStep = "join"
	// StepLeave removes members. Outcome OutcomeClosing (no member left:
	// the caller holds the resolving lease and must send the closing
	// message, then Resolved or Abort), OutcomeStillOpen, or OutcomeBusy.
	StepLeave IncidentStep = "leave"
	// StepOpened confirms an opening: the incident is open; Ref, when set,
	// is kept (e.g. the Slack parent message).
	StepOpened IncidentStep = "opened"
	// StepResolved confirms a closing: the incident and its members are
	// deleted.
	StepResolved IncidentStep = "resolved"
	// StepAbort undoes a failed send: an opening lease is dropped and the
	// members it added removed; a resolving lease returns the incident to
	// open with the members put back (the Leave's IncidentResult.Removed:
	// each with the start the incident held) — or, with none to put back
	// (the Leave of a resolve whose alert was never a member: an incident
	// never opened, its opening aborted), to closed, so the next firing
	// opens it: an incident marked open that the integration never held
	// would take every later alert as an update and page nobody.
	StepAbort IncidentStep = "abort"
	// StepUnjoin removes members whose update to an open incident failed,
	// so that a retry joins them again, or — a truncated webhook's
	// resolves, which may not close the incident — the members of resolved
	// alerts, by the rule of a Leave (a member that started after the
	// resolve's EndsAt stays), without taking the resolving lease.
	StepUnjoin IncidentStep = "unjoin"
	// StepUntrigger gives back a retrigger a Join took (IncidentOp.Retrigger)
	// whose trigger was not sent: the incident's last trigger time returns
	// to PrevTriggered if it still is Triggered (no later trigger took it).
	StepUntrigger IncidentStep = "untrigger"
	// StepTriggered settles a retrigger a Join took whose trigger was
	// sent. Until it or an Untrigger of the same token settles it, a Join
	// of another token asking for a retrigger answers OutcomeBusy (its new
	// alerts reach PagerDuty by that trigger, or take it if it is given
	// back); past the Join's Lease it is void, as if given back — its
	// sender is gone.
	StepTriggered IncidentStep = "triggered"
	// StepRef keeps Ref with an incident that has state (an integration
	// that created its reference outside an opening, e.g. a Slack parent
	// posted for the first ticket of an incident opened by a page that
	// Slack did not mirror).
	StepRef IncidentStep = "ref"
)

// Incident outcomes.
const (
	OutcomeOpening   = "opening"
	OutcomeOpen      = "open"
	OutcomeBusy      = "busy"
	OutcomeClosing   = "closing"
	OutcomeStillOpen = "still_open"
	OutcomeOK        = "ok"
	// OutcomeLost answers Opened/Resolved/Abort when the lease is no longer
	// the caller's (it expired and another sender took over).
	OutcomeLost = "lost"
)

// dueTrigger tells whether an incident last triggered at last (ms since the
// epoch, "" when unknown) may be triggered again at now (ms) after
// interval: unknown, interval or longer ago, or after now (the store's
// clock went back). The incident script's due is the same rule.
func dueTrigger(last string, now, interval int64) bool {
	t, err := strconv.ParseInt(last, 10, 64)
	return err != nil || now-t >= interval || t > now
}

// Member is one alert of an incident: its fingerprint and the start of its
// firing (ms since the epoch). A member that joins again with a later start
// is a new firing of an alert whose resolve the store never saw: the
// incident opens again. A Join with an earlier start than the member's is a
// late report of an earlier instance (a lagging Alertmanager peer, an old
// webhook retried) or the earlier start Alertmanager settled on for the same
// firing: the later start stays and nothing reopens. A Leave removes a
// member unless the member started after the leaving alert ended (EndsAt):
// the late resolve of an earlier instance leaves the live one in place,
// while any resolve of the firing the member holds (whatever start it
// carries) removes it.
type Member struct {
	Fingerprint string
	StartsAt    string
	// EndsAt is when a resolved alert ended, ms since the epoch, read by
	// Leave; "" when unknown (the Leave removes the member).
	EndsAt string
	// held is, in a member a Leave removed (IncidentResult.Removed), what
	// the store held of it (Redis: its start, then ";" and what its state
	// hash kept of its last Join: when, the start and the group), which an
	// Abort puts back as it was; "" elsewhere.
	held string
}

// laterStart tells whether start a is after time b (a start, or a Leave's
// end), both ms since the epoch as the router writes them. A time at or
// before the epoch (an alert sent without startsAt, known by its fingerprint
// alone) or one that is no number orders nothing. The incident script's
// later is the same rule.
func laterStart(a, b string) bool {
	x, errx := strconv.ParseInt(a, 10, 64)
	y, erry := strconv.ParseInt(b, 10, 64)
	return errx == nil && erry == nil && x > 0 && y > 0 && x > y
}

// IncidentOp is one incident step. Key is the incident's state key at one
// integration (built with Key, so its members live in the same slot).
type IncidentOp struct {
	Key     string
	Step    IncidentStep
	Members []Member
	// Token identifies the sender holding a lease.
	Token string
	// Lease is how long an opening or resolving lease lasts (Join, Leave).
	Lease time.Duration
	// TTL is how long the incident's state lives after its last change (on
	// Redis, Joins of an open incident re-arm it at most once every
	// min(TTL/100, 60 s): up to that much less after a Join).
	TTL time.Duration
	// Ref is kept with the incident on Opened ("" keeps the old one).
	Ref string
	// Retrigger, on a Join, is the incidents.retrigger_interval of an
	// integration that sends nothing for updates (PagerDuty), asked when
	// the Join brings new firing alerts: an opening records its time as the
	// incident's last trigger, and a Join of the open incident whose last
	// trigger is Retrigger or longer ago (or unknown) takes the trigger
	// (IncidentResult.Retriggered) — atomically, so one Join of any replica
	// takes it per interval, and a restarted replica knows when the
	// incident was last triggered. The time is the store's (Redis: TIME).
	// 0: no trigger time is read or written.
	Retrigger time.Duration
	// Triggered and PrevTriggered, on an Untrigger, are a Join's
	// IncidentResult.Retriggered and PrevTriggered.
	Triggered, PrevTriggered string
	// Group, on a Join, Leave or Unjoin, names the Alertmanager group the
	// step's alerts came in (a short hash of its receiver and groupKey; ""
	// unknown). A Join keeps, with each member, its group and when it
	// joined (the store's clock). A Leave is sent only for a webhook that
	// carries every alert of its group and no firing one of the incident:
	// the members left that came in the Leave's group and last joined
	// before Redis' current run began (INFO's uptime) may be alerts that
	// resolved while writes the run lost were made — Redis restarted from
	// an older snapshot — whose resolve will not come again, or alerts
	// Alertmanager silences or inhibits (left out of webhooks). The Leave
	// names them (IncidentResult.Restored) and changes nothing more: the
	// caller asks Alertmanager and sends a Leave of those it no longer holds
	// (a review: dropped unasked, a silenced alert's page was resolved, and
	// not paged again when its silence ended). A member a Join reached in
	// the current run (an HA peer's lagging webhook lacks the newest
	// alert), one of another group (whose alerts may fire on), one of no
	// known group and one an earlier build wrote are not named. Redis only:
	// a memory store is never restored, and ignores it.
	Group string
}

// IncidentResult answers one IncidentOp.
type IncidentResult struct {
	Outcome string
	// Ref is the reference kept with the incident ("" when none).
	Ref string
	// Added are the members a Join added (not already members), so that a
	// failed send removes exactly those (StepAbort, StepUnjoin).
	Added []Member
	// Removed are the members a Leave removed, each with the start the
	// incident held (and, kept inside, when and in which group it joined),
	// so that a failed closing puts back exactly those (StepAbort).
	Removed []Member
	// Remaining counts the members left after a Leave.
	Remaining int64
	// Restored are the fingerprints of the members a Leave left that may
	// have resolved while Redis lost writes (IncidentOp.Group).
	Restored []string
	// Retriggered is, when a Join with Retrigger took the incident's
	// trigger, the time it took (ms since the epoch, the store's clock):
	// the caller sends the trigger, and gives it back with StepUntrigger if
	// it does not. PrevTriggered is the trigger time it replaced ("" when
	// none was known).
	Retriggered, PrevTriggered string
}

// Incidents is implemented by stores that keep incident state. Every step is
// atomic; a batch costs one round trip per cluster node.
type Incidents interface {
	Incidents(ctx context.Context, ops []IncidentOp) ([]IncidentResult, error)
}

// IncidentRefReader is implemented by stores that read the Ref kept with
// an incident (IncidentResult.Ref) at its state key (IncidentKey) without
// a step: Slack's Acknowledge and Resolve reach the PagerDuty key the
// incident's trigger went to. Memory and Redis implement it.
type IncidentRefReader interface {
	IncidentRef(ctx context.Context, key string) (string, error)
}

// IncidentJoinsReader is implemented by stores that read when the members
// of incidents became ones, at their state keys (IncidentKey), in one
// round trip: Slack's Resolve tells the alerts that joined as it was
// clicked. Memory and Redis implement it.
type IncidentJoinsReader interface {
	// IncidentJoins answers, for each key, its members' fingerprints and
	// when each became one — a Join added it, or found it fired anew
	// (another start); a Join repeating it does not count —, on the
	// store's clock (Redis: TIME); for a member an earlier build joined,
	// which kept no such time, its last Join's; none when the incident
	// has no state.
	IncidentJoins(ctx context.Context, keys []string) ([]map[string]time.Time, error)
	// TimeAt is the store's clock where key lives (Redis: TIME, on a
	// Cluster the master holding key's slot), which IncidentJoins' times
	// of an incident whose keys share key's hash tag are on.
	TimeAt(ctx context.Context, key string) (time.Time, error)
}

// IncidentKey is the state key of incident at one integration (as
// "receiver/integration", alert.Notification's names): where the dispatch
// core keeps its lifecycle, and Slack triage reads whether its page is
// confirmed.
func IncidentKey(prefix, incident, integration string) string {
	return Key(prefix, "inc", incident, integration)
}

// membersKey is where an incident's members live, next to its state.
func membersKey(stateKey string) string { return stateKey + ":m" }
