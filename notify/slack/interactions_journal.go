package slack

import (
	"strings"
	"time"

	"github.com/alertrouter/alertrouter/routing/journal"
)

// Recorder journals entries without blocking; *journal.Writer implements
// it.
type Recorder interface {
	Write(entries ...journal.Entry)
}

// journalClick journals what c's click did (rec, the action taken;
// unconfirmed: an escalation PagerDuty did not confirm, recorded as taken)
// as a journal.KindTriage entry through TriageOptions.Recorder, so that the
// console tells the next engineer that the incident is acknowledged,
// escalated, silenced or resolved by hand. Actions refused or failed are
// not journaled: nothing was done.
func (t *Triage) journalClick(c *click, rec record, unconfirmed bool) {
	if t.o.Recorder == nil {
		return
	}
	tr := &journal.Triage{Action: c.b.action, UserID: c.user, Receiver: c.st.Receiver, Integration: c.st.Integration, Unconfirmed: unconfirmed}
	if c.cb != nil {
		tr.UserName = c.cb.User.Username
		if tr.UserName == "" {
			tr.UserName = c.cb.User.Name
		}
	}
	now := t.o.Now()
	switch c.b.action {
	case ActionSilence:
		tr.Silence, tr.Until = rec.extra, now.Add(c.b.silence)
	case ActionUnsilence:
		tr.Silence = rec.extra
	case ActionEscalate:
		tr.EscalatedTo = strings.TrimPrefix(rec.extra, escalatedExtra)
	}
	t.journalTriage(c.st.Incident, tr, now)
}

// journalSilenceCommand journals a silence the slash command made on
// incident, for dur from now.
func (t *Triage) journalSilenceCommand(incident, userID, userName string, ids []string, now time.Time, dur time.Duration) {
	if t.o.Recorder == nil {
		return
	}
	t.journalTriage(incident, &journal.Triage{Action: ActionSilence, UserID: userID, UserName: userName,
		Silence: strings.Join(ids, ","), Until: now.Add(dur), Command: true}, now)
}

func (t *Triage) journalTriage(incident string, tr *journal.Triage, now time.Time) {
	t.o.Recorder.Write(journal.Entry{Kind: journal.KindTriage, Time: now, Incident: incident, Triage: tr})
}
