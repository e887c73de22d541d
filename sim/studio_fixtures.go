package sim

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Studio fixtures (studio.json) are the default studio data: companies,
// their users, glossaries, folders, studio projects and videos. Timestamps
// are ages relative to the moment the data is seeded ("720h" = 30 days
// before), because the simulated clock can stand anywhere. References are
// ids of other entries of the file; every id is a studio id, unique across
// the file.

// CompanySpec is a company fixture.
type CompanySpec struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	MultiLanguage bool   `json:"multi_language,omitempty"`
	CreatedAgo    string `json:"created_ago"`
}

// UserSpec is a user fixture.
type UserSpec struct {
	ID         string `json:"id"`
	CompanyID  string `json:"company_id"`
	Name       string `json:"name"`
	Email      string `json:"email"`
	CreatedAgo string `json:"created_ago"`
}

// GlossarySpec is a glossary fixture.
type GlossarySpec struct {
	ID        string       `json:"id"`
	CompanyID string       `json:"company_id"`
	Kind      GlossaryKind `json:"kind"`
	Name      string       `json:"name"`
	Langs     []string     `json:"langs,omitempty"`
}

// FolderSpec is a folder fixture; ParentID is empty (or null) at the
// company root.
type FolderSpec struct {
	ID        string `json:"id"`
	CompanyID string `json:"company_id"`
	Name      string `json:"name"`
	ParentID  string `json:"parent_id,omitempty"`
}

// StudioProjectSpec is a studio project fixture. Empty (or null) glossary,
// remark, client name and folder fields are unset; CreatedBy defaults to
// the manager.
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
	CreatedAgo            string `json:"created_ago"`
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
	CreatedAgo      string           `json:"created_ago"`
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

// srcLangMulti is the source language of videos with several spoken
// languages; only companies with MultiLanguage may use it.
const srcLangMulti = "multi"

// loadStudioFixtures reads and checks studio.json. Unknown fields are
// refused, so a misspelt field cannot pass unnoticed.
func loadStudioFixtures(fsys fs.FS) (*StudioFixtures, error) {
	b, err := fs.ReadFile(fsys, FixtureStudio)
	if err != nil {
		return nil, fmt.Errorf("fixtures: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f StudioFixtures
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("fixtures: %s: %w", FixtureStudio, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("fixtures: %s: data after the top-level object", FixtureStudio)
	}
	if err := f.validate(); err != nil {
		return nil, fmt.Errorf("fixtures: %s: %w", FixtureStudio, err)
	}
	return &f, nil
}

// studioCheck holds what validation has seen so far; kinds are checked in
// file order (companies, users, glossaries, folders, projects, videos), so
// every reference points at a kind already indexed.
type studioCheck struct {
	ids        map[string]string // id -> the entry that has it
	companies  map[string]*CompanySpec
	users      map[string]*UserSpec
	glossaries map[string]*GlossarySpec
	folders    map[string]*FolderSpec
	projects   map[string]*StudioProjectSpec
	created    map[string]time.Duration // id -> created age
}

func entryName(list string, i int, id string) string {
	return fmt.Sprintf("%s[%d] %q", list, i, id)
}

func (c *studioCheck) id(entry, id string) error {
	if !IsStudioID(id) {
		return fmt.Errorf("%s: id must be 24 lowercase hexadecimal characters", entry)
	}
	if other, dup := c.ids[id]; dup {
		return fmt.Errorf("%s: id is already used by %s", entry, other)
	}
	c.ids[id] = entry
	return nil
}

func checkName(entry, name string) error {
	if strings.TrimSpace(name) == "" {
		return fmt.Errorf("%s: name is required", entry)
	}
	if n := utf8.RuneCountInString(name); n > MaxNameLength {
		return fmt.Errorf("%s: name is %d characters long; at most %d", entry, n, MaxNameLength)
	}
	return nil
}

func parseAge(entry, field, s string) (time.Duration, error) {
	if s == "" {
		return 0, fmt.Errorf("%s: %s is required (a Go duration such as \"720h\")", entry, field)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%s: %s %q is not a Go duration such as \"720h\"", entry, field, s)
	}
	if d < 0 {
		return 0, fmt.Errorf("%s: %s %q is negative (in the future)", entry, field, s)
	}
	return d, nil
}

// ages checks created_ago, and updated_ago when hasUpdated, and that
// created is not before the parent (the entry with id parent) was created.
func (c *studioCheck) ages(entry, id, createdAgo string, hasUpdated bool, updatedAgo, parent string) error {
	created, err := parseAge(entry, "created_ago", createdAgo)
	if err != nil {
		return err
	}
	if hasUpdated {
		updated, err := parseAge(entry, "updated_ago", updatedAgo)
		if err != nil {
			return err
		}
		if updated > created {
			return fmt.Errorf("%s: updated_ago %s is older than created_ago %s", entry, updatedAgo, createdAgo)
		}
	}
	if p, ok := c.created[parent]; ok && created > p {
		return fmt.Errorf("%s: created_ago %s is older than its %s (created %s ago)", entry, createdAgo, c.ids[parent], p)
	}
	c.created[id] = created
	return nil
}

func (c *studioCheck) company(entry, field, id string) (*CompanySpec, error) {
	co, ok := c.companies[id]
	if !ok {
		return nil, fmt.Errorf("%s: %s %q is not a company of %s", entry, field, id, FixtureStudio)
	}
	return co, nil
}

// user resolves a user reference that must be a member of companyID.
func (c *studioCheck) user(entry, field, id, companyID string) error {
	u, ok := c.users[id]
	if !ok {
		return fmt.Errorf("%s: %s %q is not a user of %s", entry, field, id, FixtureStudio)
	}
	if u.CompanyID != companyID {
		return fmt.Errorf("%s: %s %q is a user of company %q, not of %q", entry, field, id, u.CompanyID, companyID)
	}
	return nil
}

// isBareLang reports whether s is an ISO 639-1 code: two lowercase letters.
func isBareLang(s string) bool {
	return len(s) == 2 && s[0] >= 'a' && s[0] <= 'z' && s[1] >= 'a' && s[1] <= 'z'
}

// isRegionLang reports whether s is a BCP 47 language-region code such as
// es-ES.
func isRegionLang(s string) bool {
	lang, region, ok := strings.Cut(s, "-")
	return ok && isBareLang(lang) && len(region) == 2 &&
		region[0] >= 'A' && region[0] <= 'Z' && region[1] >= 'A' && region[1] <= 'Z'
}

func (f *StudioFixtures) validate() error {
	c := &studioCheck{
		ids: map[string]string{}, companies: map[string]*CompanySpec{}, users: map[string]*UserSpec{},
		glossaries: map[string]*GlossarySpec{}, folders: map[string]*FolderSpec{},
		projects: map[string]*StudioProjectSpec{}, created: map[string]time.Duration{},
	}
	for i := range f.Companies {
		co := &f.Companies[i]
		entry := entryName("companies", i, co.ID)
		if err := c.id(entry, co.ID); err != nil {
			return err
		}
		if err := checkName(entry, co.Name); err != nil {
			return err
		}
		if err := c.ages(entry, co.ID, co.CreatedAgo, false, "", ""); err != nil {
			return err
		}
		c.companies[co.ID] = co
	}
	emails := map[string]string{}
	for i := range f.Users {
		u := &f.Users[i]
		entry := entryName("users", i, u.ID)
		if err := c.id(entry, u.ID); err != nil {
			return err
		}
		if _, err := c.company(entry, "company_id", u.CompanyID); err != nil {
			return err
		}
		if err := checkName(entry, u.Name); err != nil {
			return err
		}
		if !strings.Contains(u.Email, "@") {
			return fmt.Errorf("%s: email %q has no '@'", entry, u.Email)
		}
		key := strings.ToLower(u.Email)
		if other, dup := emails[key]; dup {
			return fmt.Errorf("%s: email %q is already used by %s (emails compare case-insensitively)", entry, u.Email, other)
		}
		emails[key] = entry
		if err := c.ages(entry, u.ID, u.CreatedAgo, false, "", u.CompanyID); err != nil {
			return err
		}
		c.users[u.ID] = u
	}
	for i := range f.Glossaries {
		g := &f.Glossaries[i]
		entry := entryName("glossaries", i, g.ID)
		if err := c.id(entry, g.ID); err != nil {
			return err
		}
		if _, err := c.company(entry, "company_id", g.CompanyID); err != nil {
			return err
		}
		if !slices.Contains(GlossaryKinds, g.Kind) {
			return fmt.Errorf("%s: kind %q is not one of %s", entry, g.Kind, joinKinds())
		}
		if err := checkName(entry, g.Name); err != nil {
			return err
		}
		for _, l := range g.Langs {
			if !isBareLang(l) && !isRegionLang(l) {
				return fmt.Errorf("%s: langs: %q is neither an ISO 639-1 code (en) nor a BCP 47 code (es-ES)", entry, l)
			}
		}
		c.glossaries[g.ID] = g
	}
	for i := range f.Folders {
		fo := &f.Folders[i]
		entry := entryName("folders", i, fo.ID)
		if err := c.id(entry, fo.ID); err != nil {
			return err
		}
		if _, err := c.company(entry, "company_id", fo.CompanyID); err != nil {
			return err
		}
		if err := checkName(entry, fo.Name); err != nil {
			return err
		}
		c.folders[fo.ID] = fo
	}
	// Parents may come later in the file, so they are checked once every
	// folder is indexed.
	for i := range f.Folders {
		fo := &f.Folders[i]
		if err := c.folderParents(entryName("folders", i, fo.ID), fo); err != nil {
			return err
		}
	}
	for i := range f.Projects {
		if err := c.project(entryName("projects", i, f.Projects[i].ID), &f.Projects[i]); err != nil {
			return err
		}
	}
	for i := range f.Videos {
		if err := c.video(entryName("videos", i, f.Videos[i].ID), &f.Videos[i]); err != nil {
			return err
		}
	}
	return nil
}

// folderParents checks the chain of parents of fo: each exists, is in fo's
// company and the chain ends at the root.
func (c *studioCheck) folderParents(entry string, fo *FolderSpec) error {
	seen := map[string]bool{fo.ID: true}
	for cur := fo; cur.ParentID != ""; {
		p, ok := c.folders[cur.ParentID]
		if !ok {
			return fmt.Errorf("%s: parent_id %q is not a folder of %s", entry, cur.ParentID, FixtureStudio)
		}
		if p.CompanyID != fo.CompanyID {
			return fmt.Errorf("%s: parent_id %q is a folder of company %q, not of %q", entry, p.ID, p.CompanyID, fo.CompanyID)
		}
		if seen[p.ID] {
			return fmt.Errorf("%s: parent_id: folder %q is its own ancestor", entry, p.ID)
		}
		seen[p.ID] = true
		cur = p
	}
	return nil
}

func (c *studioCheck) project(entry string, p *StudioProjectSpec) error {
	if err := c.id(entry, p.ID); err != nil {
		return err
	}
	if _, err := c.company(entry, "company_id", p.CompanyID); err != nil {
		return err
	}
	if err := checkName(entry, p.Name); err != nil {
		return err
	}
	if p.ManagerID == "" {
		return fmt.Errorf("%s: manager_id is required", entry)
	}
	if err := c.user(entry, "manager_id", p.ManagerID, p.CompanyID); err != nil {
		return err
	}
	if p.CreatedBy != "" {
		if err := c.user(entry, "created_by", p.CreatedBy, p.CompanyID); err != nil {
			return err
		}
	}
	for _, g := range []struct {
		field string
		id    string
		kind  GlossaryKind
	}{
		{"translation_glossary", p.TranslationGlossary, GlossaryTranslation},
		{"voices_glossary", p.VoicesGlossary, GlossaryVoices},
		{"pronunciation_glossary", p.PronunciationGlossary, GlossaryPronunciation},
	} {
		if g.id == "" {
			continue
		}
		gl, ok := c.glossaries[g.id]
		if !ok {
			return fmt.Errorf("%s: %s %q is not a glossary of %s", entry, g.field, g.id, FixtureStudio)
		}
		if gl.CompanyID != p.CompanyID {
			return fmt.Errorf("%s: %s %q is a glossary of company %q, not of %q", entry, g.field, g.id, gl.CompanyID, p.CompanyID)
		}
		if gl.Kind != g.kind {
			return fmt.Errorf("%s: %s %q is a %s glossary, not a %s glossary", entry, g.field, g.id, gl.Kind, g.kind)
		}
	}
	if p.FolderID != "" {
		fo, ok := c.folders[p.FolderID]
		if !ok {
			return fmt.Errorf("%s: folder_id %q is not a folder of %s", entry, p.FolderID, FixtureStudio)
		}
		if fo.CompanyID != p.CompanyID {
			return fmt.Errorf("%s: folder_id %q is a folder of company %q, not of %q", entry, p.FolderID, fo.CompanyID, p.CompanyID)
		}
	}
	if err := c.ages(entry, p.ID, p.CreatedAgo, true, p.UpdatedAgo, p.CompanyID); err != nil {
		return err
	}
	c.projects[p.ID] = p
	return nil
}

func (c *studioCheck) video(entry string, v *VideoSpec) error {
	if err := c.id(entry, v.ID); err != nil {
		return err
	}
	p, ok := c.projects[v.ProjectID]
	if !ok {
		return fmt.Errorf("%s: project_id %q is not a project of %s", entry, v.ProjectID, FixtureStudio)
	}
	if err := checkName(entry, v.Name); err != nil {
		return err
	}
	if !slices.Contains(VideoStatuses, v.Status) {
		return fmt.Errorf("%s: status %q is not one of %s", entry, v.Status, strings.Join(VideoStatuses, ", "))
	}
	if !slices.Contains(ProcessingTypes, v.ProcessingType) {
		return fmt.Errorf("%s: processing_type %q is not one of %s", entry, v.ProcessingType, strings.Join(ProcessingTypes, ", "))
	}
	switch {
	case v.SrcLang == srcLangMulti:
		if !c.companies[p.CompanyID].MultiLanguage {
			return fmt.Errorf("%s: src_lang %q needs a company with multi_language; company %q has not", entry, v.SrcLang, p.CompanyID)
		}
	case !isBareLang(v.SrcLang):
		return fmt.Errorf("%s: src_lang %q is not an ISO 639-1 code such as \"en\" (or %q)", entry, v.SrcLang, srcLangMulti)
	}
	if len(v.DstLangs) == 0 {
		return fmt.Errorf("%s: dst_langs is required", entry)
	}
	for i, l := range v.DstLangs {
		if !isRegionLang(l) {
			return fmt.Errorf("%s: dst_langs: %q is not a BCP 47 code such as \"es-ES\"", entry, l)
		}
		if slices.Contains(v.DstLangs[:i], l) {
			return fmt.Errorf("%s: dst_langs: %q is listed twice", entry, l)
		}
	}
	if v.DurationSeconds != nil && *v.DurationSeconds <= 0 {
		return fmt.Errorf("%s: duration_seconds must be positive (or null); got %v", entry, *v.DurationSeconds)
	}
	for i, sv := range v.StringVariables {
		if sv.Key == "" {
			return fmt.Errorf("%s: string_variables[%d]: key is required", entry, i)
		}
	}
	if v.Guidance != nil {
		for _, l := range slices.Sorted(maps.Keys(v.Guidance.ByLang)) {
			if !slices.Contains(v.DstLangs, l) {
				return fmt.Errorf("%s: guidance.byLang: %q is not one of the video's dst_langs %v", entry, l, v.DstLangs)
			}
		}
	}
	if v.CreatedBy != "" {
		if err := c.user(entry, "created_by", v.CreatedBy, p.CompanyID); err != nil {
			return err
		}
	}
	return c.ages(entry, v.ID, v.CreatedAgo, true, v.UpdatedAgo, p.ID)
}

func joinKinds() string {
	s := make([]string, len(GlossaryKinds))
	for i, k := range GlossaryKinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// checkAccounts checks the studio identity of account fixtures: a user_id
// names a user of studio.json, and a company_id set beside it is that
// user's company.
func (f *StudioFixtures) checkAccounts(accounts []AccountSpec) error {
	users := map[string]*UserSpec{}
	for i := range f.Users {
		users[f.Users[i].ID] = &f.Users[i]
	}
	for _, a := range accounts {
		if a.UserID == "" {
			continue
		}
		u, ok := users[a.UserID]
		if !ok {
			return fmt.Errorf("fixtures: %s: account %q: user_id %q is not a user of %s", FixtureAccounts, a.APIKey, a.UserID, FixtureStudio)
		}
		if a.CompanyID != "" && a.CompanyID != u.CompanyID {
			return fmt.Errorf("fixtures: %s: account %q: company_id %q is not the company of user %q (%q)", FixtureAccounts, a.APIKey, a.CompanyID, a.UserID, u.CompanyID)
		}
	}
	return nil
}

// Materialize returns the fixtures as domain objects timed relative to now:
// CreatedAt is now minus created_ago, UpdatedAt now minus updated_ago.
// Every object is marked Fixture; no video is due (DueAt is zero). The
// objects share no memory with f. f must have passed LoadFixtures.
func (f *StudioFixtures) Materialize(now time.Time) StudioSeed {
	var s StudioSeed
	if f == nil {
		return s
	}
	at := func(ago string) time.Time {
		d, _ := time.ParseDuration(ago) // checked at load
		return now.Add(-d)
	}
	s.Companies = make([]Company, 0, len(f.Companies))
	for _, c := range f.Companies {
		s.Companies = append(s.Companies, Company{ID: c.ID, Name: c.Name, MultiLanguage: c.MultiLanguage, Fixture: true, CreatedAt: at(c.CreatedAgo)})
	}
	s.Users = make([]User, 0, len(f.Users))
	for _, u := range f.Users {
		s.Users = append(s.Users, User{ID: u.ID, CompanyID: u.CompanyID, Name: u.Name, Email: u.Email, Fixture: true, CreatedAt: at(u.CreatedAgo)})
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
			Fixture: true, CreatedAt: at(p.CreatedAgo), UpdatedAt: at(p.UpdatedAgo),
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
			CreatedAt: at(v.CreatedAgo), UpdatedAt: at(v.UpdatedAgo),
		})
	}
	return s
}

func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
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
