package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"
)

// Voice is a catalogue entry.
type Voice struct {
	Name     string `json:"name"`
	VoiceKey string `json:"voice_key"`
	Style    string `json:"style"`
}

// Catalog is the options and voices data, loaded from fixtures.
type Catalog struct {
	SourceLangs []string           `json:"source_langs"`
	TargetLangs []string           `json:"target_langs"`
	Voices      map[string][]Voice `json:"voices"`
	// EmotionalTransferLangs and SoundalikeLangs are language prefixes
	// ("en") or full target codes ("en-US") the special voice keys support.
	EmotionalTransferLangs []string `json:"emotional_transfer_langs"`
	SoundalikeLangs        []string `json:"soundalike_langs"`

	sources, targets map[string]bool
	voiceLang        map[string]string
	voiceByKey       map[string]Voice
}

func (c *Catalog) index() error {
	c.sources, c.targets = map[string]bool{}, map[string]bool{}
	for _, l := range c.SourceLangs {
		c.sources[l] = true
	}
	for _, l := range c.TargetLangs {
		c.targets[l] = true
	}
	c.voiceLang, c.voiceByKey = map[string]string{}, map[string]Voice{}
	for lang, vs := range c.Voices {
		if !c.targets[lang] {
			return fmt.Errorf("voices: %s is not a target language of options", lang)
		}
		for _, v := range vs {
			if v.VoiceKey == "" || !slices.Contains(Styles, v.Style) {
				return fmt.Errorf("voices: %s: bad entry %+v", lang, v)
			}
			if _, dup := c.voiceLang[v.VoiceKey]; dup {
				return fmt.Errorf("voices: duplicate key %s", v.VoiceKey)
			}
			c.voiceLang[v.VoiceKey] = lang
			c.voiceByKey[v.VoiceKey] = v
		}
	}
	return nil
}

// IsSourceLang reports whether code is a source language of options.
func (c *Catalog) IsSourceLang(code string) bool { return c.sources[code] }

// IsTargetLang reports whether code is a target language of options.
func (c *Catalog) IsTargetLang(code string) bool { return c.targets[code] }

// Voice returns a catalogue voice and the target language it belongs to.
func (c *Catalog) Voice(key string) (Voice, string, bool) {
	v, ok := c.voiceByKey[key]
	return v, c.voiceLang[key], ok
}

// VoicesFor returns the voices of a target language with the given style,
// or every voice of the language when none has that style.
func (c *Catalog) VoicesFor(lang, style string) []Voice {
	var out []Voice
	for _, v := range c.Voices[lang] {
		if v.Style == style {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		out = c.Voices[lang]
	}
	return out
}

// SpecialVoiceSupports reports whether the special voice key supports the
// target language.
func (c *Catalog) SpecialVoiceSupports(key, target string) bool {
	var list []string
	switch key {
	case VoiceSoundalike:
		list = c.SoundalikeLangs
	case VoiceEmotionalTransfer:
		list = c.EmotionalTransferLangs
	default:
		return false
	}
	prefix, _, _ := strings.Cut(target, "-")
	return slices.Contains(list, target) || slices.Contains(list, prefix)
}

// MediaRule maps source video URLs to a duration and, optionally, a forced
// outcome: refusal at creation (VideoInfoError) or a later error status.
type MediaRule struct {
	// Pattern is matched against the whole URL; '*' matches any run of
	// characters (also '/'), every other character matches itself.
	Pattern         string  `json:"pattern"`
	DurationSeconds float64 `json:"duration_seconds,omitempty"`
	Refuse          string  `json:"refuse,omitempty"`
	Fail            string  `json:"fail,omitempty"`
	Note            string  `json:"note,omitempty"`
}

// Matches reports whether url matches the rule's pattern.
func (m MediaRule) Matches(url string) bool { return GlobMatch(m.Pattern, url) }

// GlobMatch matches s against a pattern where '*' matches any run of
// characters. It runs in O(len(p)*len(s)) at worst.
func GlobMatch(p, s string) bool {
	px, sx := 0, 0
	starP, starS := -1, 0
	for sx < len(s) {
		switch {
		case px < len(p) && p[px] == '*':
			starP, starS = px, sx
			px++
		case px < len(p) && p[px] == s[sx]:
			px++
			sx++
		case starP >= 0:
			px = starP + 1
			starS++
			sx = starS
		default:
			return false
		}
	}
	for px < len(p) && p[px] == '*' {
		px++
	}
	return px == len(p)
}

// AccountSpec is an account fixture.
type AccountSpec struct {
	APIKey               string `json:"api_key"`
	Name                 string `json:"name"`
	Plan                 Plan   `json:"plan"`
	BalanceMinutes       int64  `json:"balance_minutes"`
	RetranslationEnabled bool   `json:"retranslation_enabled"`
	CloningEnabled       bool   `json:"cloning_enabled"`
	Description          string `json:"description,omitempty"`
	// Studio: the user the key belongs to (a fixture user), or, for keys
	// created at run time, the company to join ("" = a new company).
	UserID    string              `json:"user_id,omitempty"`
	CompanyID string              `json:"company_id,omitempty"`
	UserEmail string              `json:"user_email,omitempty"`
	Storage   *StorageCredentials `json:"storage,omitempty"`
	RateLimit *RateLimit          `json:"rate_limit,omitempty"`
}

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

// LoadFixtures reads and checks a fixture set.
func LoadFixtures(fsys fs.FS) (*Fixtures, error) {
	var accounts struct {
		Accounts []AccountSpec `json:"accounts"`
	}
	var cat Catalog
	var voices struct {
		Voices map[string][]Voice `json:"voices"`
	}
	var media struct {
		Rules []MediaRule `json:"rules"`
	}
	for name, dst := range map[string]any{FixtureAccounts: &accounts, FixtureOptions: &cat, FixtureVoices: &voices, FixtureMedia: &media} {
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("fixtures: %w", err)
		}
		if err := json.Unmarshal(b, dst); err != nil {
			return nil, fmt.Errorf("fixtures: %s: %w", name, err)
		}
	}
	cat.Voices = voices.Voices
	if err := cat.index(); err != nil {
		return nil, fmt.Errorf("fixtures: %w", err)
	}
	seen := map[string]bool{}
	for _, a := range accounts.Accounts {
		if a.APIKey == "" || seen[a.APIKey] || !a.Plan.Valid() || a.BalanceMinutes < 0 {
			return nil, fmt.Errorf("fixtures: accounts.json: bad or duplicate account %q", a.APIKey)
		}
		if err := CheckAPIKey(a.APIKey); err != nil {
			return nil, fmt.Errorf("fixtures: accounts.json: %w", err)
		}
		seen[a.APIKey] = true
	}
	for _, r := range media.Rules {
		if r.Pattern == "" || r.DurationSeconds < 0 {
			return nil, fmt.Errorf("fixtures: media.json: bad rule %+v", r)
		}
	}
	studio, err := loadStudioFixtures(fsys)
	if err != nil {
		return nil, err
	}
	if err := studio.checkAccounts(accounts.Accounts); err != nil {
		return nil, err
	}
	return &Fixtures{Accounts: accounts.Accounts, Catalog: &cat, MediaRules: media.Rules, Studio: studio}, nil
}

// Overlay is a file system whose files come from Top when present there and
// from Base otherwise, so a fixtures directory can override single files.
type Overlay struct{ Top, Base fs.FS }

// Open implements fs.FS.
func (o Overlay) Open(name string) (fs.File, error) {
	if o.Top != nil {
		f, err := o.Top.Open(name)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	return o.Base.Open(name)
}

// MemFS is a flat in-memory file system of named files, for fixture files
// received at run time.
type MemFS map[string][]byte

// Open implements fs.FS.
func (m MemFS) Open(name string) (fs.File, error) {
	b, ok := m[name]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return &memFile{name: name, r: bytes.NewReader(b), size: int64(len(b))}, nil
}

type memFile struct {
	name string
	r    *bytes.Reader
	size int64
}

func (f *memFile) Read(p []byte) (int, error) { return f.r.Read(p) }
func (f *memFile) Close() error               { return nil }
func (f *memFile) Stat() (fs.FileInfo, error) { return memInfo{f.name, f.size}, nil }

type memInfo struct {
	name string
	size int64
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) Mode() fs.FileMode  { return 0o444 }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return false }
func (i memInfo) Sys() any           { return nil }
