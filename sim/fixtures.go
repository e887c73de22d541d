package sim

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
)

// Fixtures is the default data set.
type Fixtures struct {
	Accounts   []AccountSpec
	Catalog    *Catalog
	MediaRules []MediaRule
	Studio     *StudioFixtures
}

// Fixture file names.
const (
	FixtureAccounts = "accounts.json"
	FixtureOptions  = "options.json"
	FixtureVoices   = "voices.json"
	FixtureMedia    = "media.json"
	FixtureStudio   = "studio.json"
)

// AccountSpec is an account fixture.
type AccountSpec struct {
	APIKey               string `json:"api_key"`
	Name                 string `json:"name"`
	Plan                 Plan   `json:"plan"`
	BalanceMinutes       int64  `json:"balance_minutes"`
	RetranslationEnabled bool   `json:"retranslation_enabled"`
	CloningEnabled       bool   `json:"cloning_enabled"`
	Description          string `json:"description,omitempty"`
	// The fixture user the key belongs to, or, for keys created at run
	// time, the company to join ("": a new company).
	UserID    string              `json:"user_id,omitempty"`
	CompanyID string              `json:"company_id,omitempty"`
	UserEmail string              `json:"user_email,omitempty"`
	Storage   *StorageCredentials `json:"storage,omitempty"`
	RateLimit *RateLimit          `json:"rate_limit,omitempty"`
	// FromPlan names the fields a new account takes from the first fixture
	// account of its plan, because its creator did not give them.
	FromPlan PlanDefaults `json:"-"`
}

// PlanDefaults names the account fields a creation left out.
type PlanDefaults struct{ Balance, Retranslation, Cloning bool }

// SandboxKeyPrefix starts every API key of a sandbox: "sbx_<id>_<key>"
// routes a request to the sandbox <id>. No key of the default simulator
// starts with it (fidelity SB2).
const SandboxKeyPrefix = "sbx_"

// CheckAPIKey keeps API keys usable in an Authorization header and as store
// keys: printable ASCII without spaces, at most 200 characters.
func CheckAPIKey(k string) error {
	if len(k) > 200 {
		return fmt.Errorf("api_key must be at most 200 characters; got %d", len(k))
	}
	for _, r := range k {
		if r <= ' ' || r > '~' {
			return errors.New("api_key must be printable ASCII without spaces")
		}
	}
	return nil
}

// Studio fixtures (studio.json): a record's creation time is the one its id
// encodes, so that ids stay the same whoever seeds them; the last update is
// an age relative to the moment the data is seeded ("2h"), never before the
// creation. Every id is a studio id, unique across the file.

// CompanySpec is a company fixture.
type CompanySpec struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	MultiLanguage bool   `json:"multi_language,omitempty"`
}

// UserSpec is a user fixture.
type UserSpec struct {
	ID        string `json:"id"`
	CompanyID string `json:"company_id"`
	Name      string `json:"name"`
	Email     string `json:"email"`
}

// GlossarySpec is a glossary fixture.
type GlossarySpec struct {
	ID        string       `json:"id"`
	CompanyID string       `json:"company_id"`
	Kind      GlossaryKind `json:"kind"`
	Name      string       `json:"name"`
	Langs     []string     `json:"langs,omitempty"`
}

// FolderSpec is a folder fixture; ParentID is empty at the company root.
type FolderSpec struct {
	ID        string `json:"id"`
	CompanyID string `json:"company_id"`
	Name      string `json:"name"`
	ParentID  string `json:"parent_id,omitempty"`
}

// StudioProjectSpec is a studio project fixture; CreatedBy defaults to the
// manager.
type StudioProjectSpec struct {
	ID                    string `json:"id"`
	CompanyID             string `json:"company_id"`
	Name                  string `json:"name"`
	ManagerID             string `json:"manager_id"`
	CreatedBy             string `json:"created_by,omitempty"`
	TranslationGlossary   string `json:"translation_glossary,omitempty"`
	VoicesGlossary        string `json:"voices_glossary,omitempty"`
	PronunciationGlossary string `json:"pronunciation_glossary,omitempty"`
	Remark                string `json:"remark,omitempty"`
	ClientName            string `json:"client_name,omitempty"`
	FolderID              string `json:"folder_id,omitempty"`
	UpdatedAgo            string `json:"updated_ago"`
}

// VideoSpec is a video fixture; its company is its project's. CreatedBy
// defaults to the project's manager.
type VideoSpec struct {
	ID              string           `json:"id"`
	ProjectID       string           `json:"project_id"`
	Name            string           `json:"name"`
	Status          string           `json:"status"`
	ProcessingType  string           `json:"processing_type"`
	SrcLang         string           `json:"src_lang"`
	DstLangs        []string         `json:"dst_langs"`
	DurationSeconds *float64         `json:"duration_seconds,omitempty"`
	Remark          *string          `json:"remark,omitempty"`
	StringVariables []StringVariable `json:"string_variables,omitempty"`
	Guidance        *Guidance        `json:"guidance,omitempty"`
	Pipeline        *PipelineOptions `json:"pipeline,omitempty"`
	CreatedBy       string           `json:"created_by,omitempty"`
	UpdatedAgo      string           `json:"updated_ago"`
}

// StudioFixtures is the content of studio.json.
type StudioFixtures struct {
	Companies  []CompanySpec       `json:"companies"`
	Users      []UserSpec          `json:"users"`
	Glossaries []GlossarySpec      `json:"glossaries"`
	Folders    []FolderSpec        `json:"folders"`
	Projects   []StudioProjectSpec `json:"projects"`
	Videos     []VideoSpec         `json:"videos"`
}

// StudioSeed is the studio fixture data as domain objects, in file order.
type StudioSeed struct {
	Companies  []Company
	Users      []User
	Glossaries []Glossary
	Folders    []Folder
	Projects   []StudioProject
	Videos     []Video
}

// Materialize returns the fixtures as domain objects, marked Fixture, that
// share no memory with f; no video is due. f must have passed fixtures.Load.
func (f *StudioFixtures) Materialize(now time.Time) StudioSeed {
	var s StudioSeed
	if f == nil {
		return s
	}
	at := StudioIDTime
	updated := func(id, ago string) time.Time {
		d, _ := time.ParseDuration(ago) // checked at load
		return maxTime(now.Add(-d), StudioIDTime(id))
	}
	s.Companies = make([]Company, 0, len(f.Companies))
	for _, c := range f.Companies {
		s.Companies = append(s.Companies, Company{ID: c.ID, Name: c.Name, MultiLanguage: c.MultiLanguage, Fixture: true, CreatedAt: at(c.ID)})
	}
	s.Users = make([]User, 0, len(f.Users))
	for _, u := range f.Users {
		s.Users = append(s.Users, User{ID: u.ID, CompanyID: u.CompanyID, Name: u.Name, Email: u.Email, Fixture: true, CreatedAt: at(u.ID)})
	}
	s.Glossaries = make([]Glossary, 0, len(f.Glossaries))
	for _, g := range f.Glossaries {
		s.Glossaries = append(s.Glossaries, Glossary{ID: g.ID, CompanyID: g.CompanyID, Kind: g.Kind, Name: g.Name, Langs: slices.Clone(g.Langs), Fixture: true})
	}
	s.Folders = make([]Folder, 0, len(f.Folders))
	for _, fo := range f.Folders {
		s.Folders = append(s.Folders, Folder{ID: fo.ID, CompanyID: fo.CompanyID, Name: fo.Name, ParentID: fo.ParentID, Fixture: true})
	}
	projects := make(map[string]StudioProject, len(f.Projects))
	s.Projects = make([]StudioProject, 0, len(f.Projects))
	for _, p := range f.Projects {
		sp := StudioProject{
			ID: p.ID, CompanyID: p.CompanyID, Name: p.Name, Status: StudioProjectStatusNew, ManagerID: p.ManagerID,
			TranslationGlossary: p.TranslationGlossary, VoicesGlossary: p.VoicesGlossary, PronunciationGlossary: p.PronunciationGlossary,
			Remark: p.Remark, ClientName: p.ClientName, FolderID: p.FolderID, CreatedBy: cmp.Or(p.CreatedBy, p.ManagerID),
			Fixture: true, CreatedAt: at(p.ID), UpdatedAt: updated(p.ID, p.UpdatedAgo),
		}
		projects[p.ID] = sp
		s.Projects = append(s.Projects, sp)
	}
	s.Videos = make([]Video, 0, len(f.Videos))
	for _, v := range f.Videos {
		p := projects[v.ProjectID]
		s.Videos = append(s.Videos, Video{
			ID: v.ID, ProjectID: v.ProjectID, CompanyID: p.CompanyID, Name: v.Name, Status: v.Status,
			ProcessingType: v.ProcessingType, SrcLang: v.SrcLang, DstLangs: slices.Clone(v.DstLangs),
			DurationSeconds: copyPtr(v.DurationSeconds), Remark: copyPtr(v.Remark),
			StringVariables: slices.Clone(v.StringVariables), Guidance: copyGuidance(v.Guidance),
			Pipeline: copyPipeline(v.Pipeline), Fixture: true, CreatedBy: cmp.Or(v.CreatedBy, p.ManagerID),
			CreatedAt: at(v.ID), UpdatedAt: updated(v.ID, v.UpdatedAgo),
		})
	}
	return s
}

func maxTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return b
	}
	return a
}

func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	return new(*p)
}

func copyGuidance(g *Guidance) *Guidance {
	if g == nil {
		return nil
	}
	return &Guidance{Common: copyPtr(g.Common), ByLang: maps.Clone(g.ByLang)}
}

func copyPipeline(p *PipelineOptions) *PipelineOptions {
	if p == nil {
		return nil
	}
	return &PipelineOptions{
		ShouldAutomateTranscription:  copyPtr(p.ShouldAutomateTranscription),
		ShouldAutomateTranslation:    copyPtr(p.ShouldAutomateTranslation),
		ShouldAutomateVoiceSelection: copyPtr(p.ShouldAutomateVoiceSelection),
	}
}
