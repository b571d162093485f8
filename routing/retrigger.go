package routing

import (
	"slices"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// retrigger turns b — new alerts joining an open incident, at an
// integration that sends nothing for updates (PagerDuty) — into a trigger
// of the incident when the incident's Join took its retrigger: the
// incident, at any replica, was not triggered for RetriggerInterval (or
// its last trigger is unknown: opened by a router that kept none).
// PagerDuty folds the trigger into its incident while it is open, and
// opens a new one, paging, when the incident was resolved there without the
// router knowing (in PagerDuty's own UI, by its auto-resolve, or because
// Alertmanager sends no resolves to the router): otherwise a new alert of
// that incident would page no one until dedup.repeat_interval.
// Alertmanager's own PagerDuty integration triggers on every change of a
// group, at most every group_interval.
//
// The last trigger's time lives with the incident's state in the store
// (store.IncidentOp.Retrigger): an opening sets it, and a Join asking for a
// retrigger takes it atomically in the incident script's call the Join
// already makes — no round trip of its own — so a storm's thousands of
// joins, at any number of replicas, restarted ones included, send one
// event per incident per interval. The trigger is taken before the send
// and given back (store.StepUntrigger, with the settle's writes) when no
// trigger of the incident was delivered.
func (p *Pipeline) retrigger(b *batch) {
	// mayRetrigger holds a firing at an integration that holds incidents:
	// silentUpdate's other terms are coalescible's.
	if !b.retrigger || !mayRetrigger(b) || !coalescible(b) {
		return
	}
	b.n.Opening = true
	p.Logger.Debug("new alerts joined an open incident not triggered for retrigger_interval: triggering it again",
		"receiver", b.receiver, "integration", b.integ.Name, "incident", b.incident)
}

// foldReminders suppresses the reminders to an integration whose
// incident a batch of the same webhook triggers again (retrigger): the
// reminder is that trigger again — an audit saw both sent, 6 ms apart,
// spending the routing key's rate limit twice — and the retrigger carries
// the new alerts (a review: suppressing the retrigger instead left them
// out of PagerDuty). The reminder is recorded as done, as a reminder
// PagerDuty's open incident folds in is.
func foldReminders(batches []*batch) {
	for _, b := range batches {
		if !remindsTrigger(b) {
			continue
		}
		if slices.ContainsFunc(batches, func(o *batch) bool {
			return o.retrigger && o.n.Opening && mayRetrigger(o) && incidentKeyOf(o) == incidentKeyOf(b)
		}) {
			b.skip = true
		}
	}
}

// mayRetrigger reports whether b may send its incident's trigger again:
// new firing alerts, deliverable, at an integration that sends nothing for
// updates of an open incident.
func mayRetrigger(b *batch) bool {
	return b.err == nil && !b.skip && b.kind == alert.KindFiring && b.integ.silentUpdates()
}

// remindsTrigger reports whether b is a reminder that sends its incident's
// trigger again: deliverable, at an integration that sends nothing for
// updates (PagerDuty's reminder is its trigger).
func remindsTrigger(b *batch) bool {
	return b.err == nil && !b.skip && b.kind == alert.KindReminder && b.integ.silentUpdates()
}
