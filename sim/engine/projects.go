package engine

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/script"
	"github.com/dubsim/dubsim/sim/statemachine"
)

const seqProjects = "platform_projects"

// Projects are the platform's dubbing projects and their re-translations.
type Projects struct {
	*core
	ids      *idgen
	fixtures *fixtureSet
	accounts *Accounts
	prober   Prober
	timing   sim.Timing
	work     *workSet // the artifacts': probes are listed with the downloads
}

// settle applies the due transition of p, if any.
func (e *Projects) settle(tx sim.Tx, p sim.Project, now time.Time) (sim.Project, error) {
	np, refund := statemachine.Next(p, now)
	if np.Status == p.Status && np.DueAt.Equal(p.DueAt) {
		return p, nil
	}
	if np.Status == sim.StatusReady {
		Materialize(e.fixtures.catalog(), e.ids.seed, &np)
	}
	if np.Status != p.Status {
		noteEvent(tx, Event{Resource: "project", ID: p.ID, From: string(p.Status), To: string(np.Status), At: now, Reason: np.ErrorMessage})
	}
	if refund > 0 {
		a, err := tx.Accounts().Get(p.APIKey)
		if err != nil && !errors.Is(err, sim.ErrNotFound) {
			return p, err
		}
		if err == nil { // a removed account is credited nothing
			a.BalanceMinutes += refund
			if err := tx.Accounts().Put(a); err != nil {
				return p, err
			}
		}
	}
	return np, tx.PutProject(np)
}

// ownedProject reads a project of the account with its due transition
// applied.
func (e *Projects) ownedProject(tx sim.Tx, apiKey, id string, now time.Time) (sim.Project, error) {
	owned := func(id string) (sim.Project, error) {
		return get(tx.Project, id, func(p sim.Project) bool { return p.APIKey == apiKey }, notFound)
	}
	return settleIn(tx, now, owned, id, e.settle)
}

// Project returns a project of the account, with any due transition
// applied. Scripts are read only when the status shows them.
func (e *Projects) Project(ctx context.Context, apiKey, id string) (sim.Project, error) {
	now := e.clock.Now()
	var p sim.Project
	err := e.store.View(ctx, func(tx sim.Tx) error {
		head, err := get(tx.ProjectHead, id, func(p sim.Project) bool { return p.APIKey == apiKey }, notFound)
		if err != nil {
			return err
		}
		p = head
		if head.Status == sim.StatusReady {
			p, err = tx.Project(id)
		}
		return err
	})
	if err != nil || !statemachine.ProjectDue(p, now) {
		return p, err
	}
	return in(ctx, e.update, func(tx sim.Tx) (sim.Project, error) { return e.ownedProject(tx, apiKey, id, now) })
}

// OutputSignature signs the download URLs of a project's outputs of its
// current generation: only this store can make or check it, so a project id
// (which follows the seed) is not enough to download a file.
func (e *Projects) OutputSignature(p sim.Project) string {
	return e.ids.secretToken(16, "output", p.ID, strconv.Itoa(p.OutputGen))
}

// ProjectOutput returns a project for serving its output files, whoever
// asks (download URLs carry no key but a signature, like presigned links).
func (e *Projects) ProjectOutput(ctx context.Context, id string) (sim.Project, error) {
	p, err := in(ctx, e.store.View, func(tx sim.Tx) (sim.Project, error) { return get(tx.Project, id, nil, notFound) })
	if err == nil && statemachine.ProjectDue(p, e.clock.Now()) {
		return e.Project(ctx, p.APIKey, id)
	}
	return p, err
}

// CreateProject charges the account and creates a project in progress, in
// one transaction, so the balance never goes negative under concurrent
// requests.
func (e *Projects) CreateProject(ctx context.Context, apiKey string, np sim.NewProject, idem *sim.IdemWrite[sim.Receipt]) (sim.Receipt, error) {
	var rc sim.Receipt
	acct, err := e.accounts.Account(ctx, apiKey)
	if err != nil {
		return rc, err
	}
	if err := statemachine.CheckCreateAccess(acct, np); err != nil {
		return rc, err
	}
	var utterances []string
	pastEnd := sim.MsgScriptPastEnd
	if np.SourceScriptContent != nil {
		format, cues, err := script.ParseCues(*np.SourceScriptContent)
		if err != nil {
			return rc, sim.Errorf(sim.CodeValidation, sim.MsgScriptContent, err)
		}
		if np.UseFixedTimings && format != script.FormatPlain {
			// The cues' timings and speakers are kept, as a source_script's.
			np.SourceScript, pastEnd = script.TimedSegments(cues), sim.MsgCuePastEnd
		} else {
			for _, c := range cues {
				utterances = append(utterances, c.Text)
			}
		}
	}
	info, err := e.probe(ctx, np.SourceVideoURL)
	if err != nil {
		return rc, err
	}
	duration := info.Duration
	if n := len(np.SourceScript); n > 0 {
		end := time.Duration(np.SourceScript[n-1].EndMS) * time.Millisecond
		for i, s := range np.SourceScript {
			if time.Duration(s.EndMS)*time.Millisecond <= duration {
				continue
			}
			if info.Origin != sim.OriginDerived {
				return rc, sim.Errorf(sim.CodeValidation, pastEnd, i, s.EndMS, duration.Milliseconds())
			}
			end = max(end, time.Duration(s.EndMS)*time.Millisecond)
		}
		if info.Origin == sim.OriginDerived && end > duration {
			// A duration invented from the URL yields to the client's script.
			duration = (end + time.Second).Truncate(time.Second)
		}
	}
	if duration > sim.MaxSourceDuration {
		return rc, sim.Errorf(sim.CodeVideoInfo, sim.MsgSourceTooLong, duration.Round(time.Second), sim.MaxSourceDuration)
	}
	cost := sim.CostMinutes(duration)
	err = e.batch(ctx, func(tx sim.Tx) error {
		now := e.clock.Now()
		acct, err := accountIn(tx, apiKey)
		if err != nil {
			return err
		}
		if acct.BalanceMinutes < cost {
			return sim.Errorf(sim.CodePaymentRequired, sim.MsgInsufficientBalance)
		}
		seq, err := tx.NextSequence(seqProjects)
		if err != nil {
			return err
		}
		p := e.buildProject(e.ids.keys.PlatformProjectID(seq-1), apiKey, np, info, duration, utterances, now)
		p.CostMinutes = cost
		if err := applyOutcomeRules(tx, &p, now); err != nil {
			return err
		}
		acct.BalanceMinutes -= cost
		if err := tx.Accounts().Put(acct); err != nil {
			return err
		}
		if err := tx.PutProject(p); err != nil {
			return err
		}
		rc = sim.Receipt{ProjectID: p.ID, CostMinutes: cost, EstimatedCompletion: p.DueAt, BalanceMinutes: acct.BalanceMinutes}
		return saveIdem(tx, idem, rc, now)
	})
	return rc, err
}

// probe reads the source video's duration, listed as background work while
// it runs.
func (e *Projects) probe(ctx context.Context, url string) (sim.SourceInfo, error) {
	w := &work{kind: WorkProbe, started: e.clock.Now()}
	w.setURL(url)
	w.set(waitHost)
	e.work.add(w)
	defer e.work.remove(w)
	return e.prober.Probe(ctx, url)
}

func (e *Projects) buildProject(id, apiKey string, np sim.NewProject, info sim.SourceInfo, duration time.Duration, utterances []string, now time.Time) sim.Project {
	p := sim.Project{
		ID: id, APIKey: apiKey, Name: np.Name,
		SourceLang: np.SourceLang, TargetLang: np.TargetLang, SourceVideoURL: np.SourceVideoURL,
		MixingMode: np.MixingMode, TTSVolume: np.TTSVolume,
		UseSoundalike: np.UseSoundalike, UseEmotionalTransfer: np.UseEmotionalTransfer, UseFixedTimings: np.UseFixedTimings,
		HasGlossary: np.GlossaryContent != nil,
		DurationMS:  duration.Milliseconds(), DurationSource: info.Origin,
		Status: sim.StatusInProgress, CreatedAt: now,
		DueAt:          ceilSecond(now.Add(e.timing.Processing(duration))),
		ScriptsPending: true,
	}
	var glossary []sim.GlossaryTerm
	if np.GlossaryContent != nil {
		glossary, _ = script.ParseGlossary(*np.GlossaryContent, np.SourceLang, np.TargetLang)
	}
	if np.SourceScript != nil || utterances != nil || glossary != nil {
		p.ScriptInput = &sim.ScriptInput{SourceScript: np.SourceScript, Utterances: utterances, Glossary: glossary}
	}
	p.History = []sim.Event{{At: now, Kind: sim.EventCreated, EstimatedCompletion: p.DueAt}}
	if info.Fail != "" {
		p.Outcome = sim.Outcome{Error: true, Message: info.Fail}
	}
	return p
}

// Materialize produces the scripts and speakers of a project whose scripts
// are pending, from the client's script input or a synthetic transcript,
// with voices from cat. The result depends only on the project and the seed.
func Materialize(cat *sim.Catalog, ids *sim.IDs, p *sim.Project) {
	if !p.ScriptsPending {
		return
	}
	r := sim.NewRand(ids.Hash("project", p.ID, p.SourceVideoURL))
	duration := p.Duration()
	var in sim.ScriptInput
	if p.ScriptInput != nil {
		in = *p.ScriptInput
	}
	var source []sim.Segment
	switch {
	case in.SourceScript != nil && p.UseFixedTimings:
		source = append(source, in.SourceScript...)
	case in.SourceScript != nil:
		source = script.Realign(in.SourceScript, duration)
	case in.Utterances != nil:
		source = script.Align(in.Utterances, duration)
	default:
		source = script.Synthesize(r, duration)
	}
	if !script.HasSpeakers(source) { // the client's speakers are kept
		source = script.AssignSpeakers(r, source, 1+r.Intn(3))
	}
	target := script.TargetScript(ids, source, p.SourceLang, p.TargetLang, in.Glossary)
	var speakers []sim.Speaker
	used := map[string]bool{}
	for _, sid := range script.Speakers(source) {
		style := script.SourceStyle(p.SourceVideoURL, sid)
		key := ""
		switch {
		case p.UseEmotionalTransfer:
			key = sim.VoiceEmotionalTransfer
		case p.UseSoundalike:
			key = sim.VoiceSoundalike
		default:
			voices := cat.VoicesFor(p.TargetLang, style)
			for try := 0; try < len(voices) && len(voices) > 0; try++ {
				v := voices[(r.Intn(len(voices))+try)%len(voices)]
				key = v.VoiceKey
				style = v.Style
				if !used[key] {
					break
				}
			}
			used[key] = true
		}
		speakers = append(speakers, sim.Speaker{SpeakerID: sid, Style: style, VoiceKey: key})
	}
	p.SourceScript, p.TargetScript, p.Speakers = source, target, speakers
	p.ScriptsPending, p.ScriptInput = false, nil
}

// DeleteProject removes a project that is not in progress. No refund.
func (e *Projects) DeleteProject(ctx context.Context, apiKey, id string) error {
	return e.update(ctx, func(tx sim.Tx) error {
		now := e.clock.Now()
		if _, err := accountIn(tx, apiKey); err != nil {
			return err
		}
		p, err := e.ownedProject(tx, apiKey, id, now)
		if err != nil {
			return err
		}
		if p.Status == sim.StatusInProgress {
			return sim.Errorf(sim.CodeValidation, sim.MsgDeleteInProgress)
		}
		return tx.DeleteProject(id)
	})
}

// Retranslate checks a re-translation request and, unless dryRun, puts the
// project back through processing. dryRun answers what the real request
// would, without changing the project.
func (e *Projects) Retranslate(ctx context.Context, apiKey, id string, in sim.RetranslationInput, dryRun bool, idem *sim.IdemWrite[sim.Receipt]) (sim.Receipt, error) {
	var rc sim.Receipt
	err := e.update(ctx, func(tx sim.Tx) error {
		now := e.clock.Now()
		acct, err := accountIn(tx, apiKey)
		if err != nil {
			return err
		}
		if !acct.RetranslationEnabled {
			return sim.Errorf(sim.CodeForbidden, sim.MsgRetranslationDisabled)
		}
		p, err := e.ownedProject(tx, apiKey, id, now)
		if err != nil {
			return err
		}
		if p.Status != sim.StatusReady {
			return sim.Errorf(sim.CodeValidation, sim.MsgRetranslationNotReady, p.ID, p.Status)
		}
		rt, err := statemachine.ValidateRetranslation(e.fixtures.catalog(), acct, p, in)
		if err != nil || dryRun {
			return err
		}
		if !rt.UseFixedTimings {
			rt.TargetScript = script.Realign(rt.TargetScript, p.Duration())
		}
		p.Pending = &rt
		p.Status = sim.StatusInProgress
		p.DueAt = ceilSecond(now.Add(e.timing.Retranslation(p.Duration())))
		p.Outcome = sim.Outcome{}
		p.TranslationsCount++
		p.History = append(p.History, sim.Event{At: now, Kind: sim.EventRetranslation, EstimatedCompletion: p.DueAt})
		if err := tx.PutProject(p); err != nil {
			return err
		}
		rc = sim.Receipt{ProjectID: p.ID, EstimatedCompletion: p.DueAt, BalanceMinutes: acct.BalanceMinutes, TranslationsCount: p.TranslationsCount}
		return saveIdem(tx, idem, rc, now)
	})
	return rc, err
}
