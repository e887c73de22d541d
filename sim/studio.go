package sim

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// Company is a studio organisation.
type Company struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// MultiLanguage enables the source language "multi" on video creation.
	MultiLanguage bool      `json:"multi_language,omitempty"`
	Fixture       bool      `json:"fixture,omitempty"`
	CreatedAt     time.Time `json:"created_at"`
}

// User is a member of a company; API keys belong to users.
type User struct {
	ID        string    `json:"id"`
	CompanyID string    `json:"company_id"`
	Name      string    `json:"name"`
	Email     string    `json:"email"`
	Fixture   bool      `json:"fixture,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// GlossaryKind is what a glossary maps.
type GlossaryKind string

// Glossary kinds, one per project field.
const (
	GlossaryTranslation   GlossaryKind = "translation"
	GlossaryVoices        GlossaryKind = "voices"
	GlossaryPronunciation GlossaryKind = "pronunciation"
)

// GlossaryKinds lists the valid kinds.
var GlossaryKinds = []GlossaryKind{GlossaryTranslation, GlossaryVoices, GlossaryPronunciation}

// Glossary is a company's glossary; only its id is visible through the API.
type Glossary struct {
	ID        string       `json:"id"`
	CompanyID string       `json:"company_id"`
	Kind      GlossaryKind `json:"kind"`
	Name      string       `json:"name"`
	Langs     []string     `json:"langs,omitempty"`
	Fixture   bool         `json:"fixture,omitempty"`
}

// Folder groups a company's studio projects.
type Folder struct {
	ID        string `json:"id"`
	CompanyID string `json:"company_id"`
	Name      string `json:"name"`
	ParentID  string `json:"parent_id,omitempty"`
	Fixture   bool   `json:"fixture,omitempty"`
}

// StudioProjectStatusNew is the only studio project status seen in the docs.
const StudioProjectStatusNew = "new"

// StudioProject is a studio project as stored.
type StudioProject struct {
	ID                    string    `json:"id"`
	CompanyID             string    `json:"company_id"`
	Name                  string    `json:"name"`
	Status                string    `json:"status"`
	ManagerID             string    `json:"manager_id"`
	TranslationGlossary   string    `json:"translation_glossary,omitempty"`
	VoicesGlossary        string    `json:"voices_glossary,omitempty"`
	PronunciationGlossary string    `json:"pronunciation_glossary,omitempty"`
	Remark                string    `json:"remark,omitempty"`
	ClientName            string    `json:"client_name,omitempty"`
	FolderID              string    `json:"folder_id,omitempty"`
	CreatedBy             string    `json:"created_by,omitempty"`
	Fixture               bool      `json:"fixture,omitempty"`
	CreatedAt             time.Time `json:"created_at"`
	UpdatedAt             time.Time `json:"updated_at"`
}

// Video statuses seen in the docs.
const (
	VideoNew        = "new"
	VideoInProgress = "in_progress"
	VideoCompleted  = "completed"
)

// VideoStatuses and ProcessingTypes are the values seen in the spec and docs.
var (
	VideoStatuses   = []string{VideoNew, VideoInProgress, VideoCompleted}
	ProcessingTypes = []string{"dubbing", "voiceover", "audio_description", "transcription", "translation", "subtitling", "standard"}
	// WorkflowTypes are the processing types the create-video docs list.
	WorkflowTypes = []string{"dubbing", "voiceover", "audio_description", "transcription", "translation", "subtitling"}
)

// StringVariable is one metadata entry of a video.
type StringVariable struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Guidance is a video's translation guidance.
type Guidance struct {
	Common *string           `json:"common,omitempty"`
	ByLang map[string]string `json:"byLang,omitempty"`
}

// PipelineOptions are the automation switches of a video.
type PipelineOptions struct {
	ShouldAutomateTranscription  *bool `json:"shouldAutomateTranscription,omitempty"`
	ShouldAutomateTranslation    *bool `json:"shouldAutomateTranslation,omitempty"`
	ShouldAutomateVoiceSelection *bool `json:"shouldAutomateVoiceSelection,omitempty"`
}

// Video is a video of a studio project as stored.
type Video struct {
	ID                         string           `json:"id"`
	ProjectID                  string           `json:"project_id"`
	CompanyID                  string           `json:"company_id"`
	Name                       string           `json:"name"`
	Status                     string           `json:"status"`
	ProcessingType             string           `json:"processing_type"`
	SrcLang                    string           `json:"src_lang"`
	DstLangs                   []string         `json:"dst_langs"`
	SourceArtifactID           string           `json:"source_artifact_id,omitempty"`
	BackgroundArtifactID       string           `json:"background_artifact_id,omitempty"`
	InternationalMixArtifactID string           `json:"international_mix_artifact_id,omitempty"`
	VocalsHitlArtifactID       string           `json:"vocals_hitl_artifact_id,omitempty"`
	DurationSeconds            *float64         `json:"duration_seconds,omitempty"`
	Remark                     *string          `json:"remark,omitempty"`
	StringVariables            []StringVariable `json:"string_variables"`
	Guidance                   *Guidance        `json:"guidance,omitempty"`
	Pipeline                   *PipelineOptions `json:"pipeline,omitempty"`
	// DueAt is when the automatic lifecycle moves the video on; zero when
	// it does not.
	DueAt     time.Time `json:"due_at,omitzero"`
	Fixture   bool      `json:"fixture,omitempty"`
	CreatedBy string    `json:"created_by,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Artifact types, statuses and upload methods.
const (
	ArtifactVideo  = "video"
	ArtifactAudio  = "audio"
	ArtifactScript = "script"

	ArtifactCreated   = "created"
	ArtifactStarted   = "upload_started"
	ArtifactCompleted = "upload_completed"
	ArtifactFailed    = "upload_failed"

	UploadDirectURL = "direct_url"
	UploadFragments = "fragments"
)

// ArtifactTypes lists the valid artifact types.
var ArtifactTypes = []string{ArtifactVideo, ArtifactAudio, ArtifactScript}

// Fragment is one part of a fragments artifact.
type Fragment struct {
	URL       string  `json:"url,omitempty"`
	S3Path    string  `json:"s3Path,omitempty"`
	StartTime float64 `json:"startTime"`
}

// Artifact source kinds (how the file reaches the service).
const (
	SourceUpload    = "upload"    // a presigned upload to dubsim
	SourceURL       = "url"       // a public URL
	SourceBucket    = "bucket"    // the client's own bucket
	SourceFragments = "fragments" // concatenated fragments
)

// ArtifactResult is how an artifact's processing ends, once known.
type ArtifactResult struct {
	Known    bool     `json:"known"`
	Fail     string   `json:"fail,omitempty"`
	Size     int64    `json:"size,omitempty"`
	Duration *float64 `json:"duration,omitempty"`
	Blob     string   `json:"blob,omitempty"` // the stored file, when dubsim holds the bytes
	// Stored is the bytes dubsim downloaded and keeps for the artifact,
	// which count toward the storage quotas.
	Stored int64  `json:"stored,omitempty"`
	Origin string `json:"origin,omitempty"` // of size and duration: upload, media, forced or derived
	// Media keeps the formats of the fragments downloaded while presigned
	// fragments wait to be resolved (they are compared then).
	Media []MediaFormat `json:"media,omitempty"`
}

// Artifact is a studio artifact as stored.
type Artifact struct {
	ID           string     `json:"id"`
	CompanyID    string     `json:"company_id"`
	CreatedBy    string     `json:"created_by"`
	APIKey       string     `json:"api_key"`
	Name         string     `json:"name"`
	Type         string     `json:"type"`
	Status       string     `json:"status"`
	UploadMethod string     `json:"upload_method"`
	SourceKind   string     `json:"source_kind"`
	SourceURL    string     `json:"source_url,omitempty"`
	SourcePath   string     `json:"source_path,omitempty"` // the s3Path the client sent
	Fragments    []Fragment `json:"fragments,omitempty"`
	UploadID     string     `json:"upload_id,omitempty"`
	S3Path       string     `json:"s3_path"` // uploads/<id>/<file>
	S3Bucket     string     `json:"s3_bucket"`

	Size         *int64   `json:"size,omitempty"`
	Duration     *float64 `json:"duration,omitempty"`
	ErrorMessage string   `json:"error_message,omitempty"`

	// Result is the planned end of processing; Pending is true while a real
	// download runs.
	Result  ArtifactResult `json:"result"`
	Pending bool           `json:"pending,omitempty"`
	// StartAt and DoneAt schedule the two transitions; DueAt is the next
	// one (zero when none is due).
	StartAt   time.Time `json:"start_at"`
	DoneAt    time.Time `json:"done_at"`
	DueAt     time.Time `json:"due_at,omitzero"`
	Fixture   bool      `json:"fixture,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Duration is the length of the video's source (zero when unknown).
func (v Video) Duration() time.Duration {
	if v.DurationSeconds == nil {
		return 0
	}
	return time.Duration(*v.DurationSeconds * float64(time.Second))
}

// Usable reports whether the artifact can be used (upload completed).
func (a Artifact) Usable() bool { return a.Status == ArtifactCompleted }

// Upload is a presigned upload slot: the client PUTs a file to its URL, then
// creates an artifact with its S3Path.
type Upload struct {
	ID        string    `json:"id"` // a UUID, as in the docs' temp path
	APIKey    string    `json:"api_key"`
	CompanyID string    `json:"company_id"`
	FileName  string    `json:"file_name"`
	S3Path    string    `json:"s3_path"` // s3://<bucket>/temp/<id>/<file>
	ExpiresAt time.Time `json:"expires_at"`
	CreatedAt time.Time `json:"created_at"`
	// Set once the file is PUT.
	Uploaded   bool        `json:"uploaded,omitempty"`
	UploadedAt time.Time   `json:"uploaded_at,omitzero"`
	Size       int64       `json:"size,omitempty"`
	Duration   *float64    `json:"duration,omitempty"`
	Format     string      `json:"format,omitempty"`
	Blob       string      `json:"blob,omitempty"`
	Media      MediaFormat `json:"media,omitzero"`
}

// StorageCredentials let the service read a client's own bucket.
type StorageCredentials struct {
	AccessKeyID     string   `json:"access_key_id"`
	SecretAccessKey string   `json:"secret_access_key,omitempty"`
	Region          string   `json:"region,omitempty"`
	Buckets         []string `json:"buckets,omitempty"` // empty: any
}

// Covers reports whether the credentials give access to bucket.
func (c *StorageCredentials) Covers(bucket string) bool {
	return c != nil && c.AccessKeyID != "" && (len(c.Buckets) == 0 || slices.Contains(c.Buckets, bucket))
}

// RateLimit is a per-key request limit of the studio interface; zero fields
// mean no limit.
type RateLimit struct {
	PerMinute int `json:"per_minute,omitempty"`
	PerDay    int `json:"per_day,omitempty"`
}

// DocumentedRateLimit is what the studio docs state.
var DocumentedRateLimit = RateLimit{PerMinute: 60, PerDay: 1000}

// Caller is the studio identity of a request: the key's account, its user
// and the user's company.
type Caller struct {
	Account Account
	User    User
	Company Company
}

// StudioTime formats a studio timestamp: ISO 8601 UTC with milliseconds.
func StudioTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// StudioIDTime is the creation time a studio id encodes, as a MongoDB
// ObjectId does: its first 8 hexadecimal digits are Unix seconds. s must
// pass IsStudioID.
func StudioIDTime(s string) time.Time {
	sec, _ := strconv.ParseUint(s[:8], 16, 32)
	return time.Unix(int64(sec), 0).UTC()
}

// IsStudioID reports whether s has the shape of a studio identifier: 24
// lowercase hexadecimal characters.
func IsStudioID(s string) bool {
	return len(s) == 24 && strings.Trim(s, "0123456789abcdef") == ""
}

// StudioTiming is the processing-time model of the studio resources: a
// delay to start, then a base time plus a share per size, pro rata.
type StudioTiming struct {
	ArtifactStart  time.Duration
	ArtifactBase   time.Duration
	ArtifactPerGB  time.Duration
	VideoStart     time.Duration
	VideoBase      time.Duration
	VideoPerMinute time.Duration
}

// DefaultStudioTiming is the default studio processing-time model.
var DefaultStudioTiming = StudioTiming{
	ArtifactStart: 2 * time.Second, ArtifactBase: 5 * time.Second, ArtifactPerGB: 60 * time.Second,
	VideoStart: time.Minute, VideoBase: 10 * time.Minute, VideoPerMinute: time.Minute,
}

// ArtifactProcessing is how long upload_started lasts for a file of size bytes.
func (t StudioTiming) ArtifactProcessing(size int64) time.Duration {
	return t.ArtifactBase + time.Duration(float64(size)/float64(1<<30)*float64(t.ArtifactPerGB))
}

// VideoProcessing is how long in_progress lasts for a video of d.
func (t StudioTiming) VideoProcessing(d time.Duration) time.Duration {
	return t.VideoBase + time.Duration(d.Minutes()*float64(t.VideoPerMinute))
}

// BlobQuota bounds the files a shared dubsim stores: the bytes of every
// stored file (Total), of one company's (PerCompany), the presigned uploads
// a company has outstanding and the artifact downloads it has pending. Zero
// is unlimited.
type BlobQuota struct {
	Total, PerCompany   int64
	PresignsPerCompany  int
	DownloadsPerCompany int
}

// Default quotas of the binary (fidelity HB6, HB7, HX1).
const (
	DefaultBlobQuota           = 20_000_000_000 // 20 GB
	DefaultCompanyBlobQuota    = 10_000_000_000 // 10 GB
	DefaultPresignsPerCompany  = 1000
	DefaultDownloadsPerCompany = 100
)

// Studio limits.
const (
	MaxArtifactBytes = 5_000_000_000 // 5 GB, decimal, as the docs write it
	UploadValidity   = 24 * time.Hour
	MaxNameLength    = 500
)

// Studio messages quoted from the provider's docs (keep byte for byte),
// then dubsim's own.
const (
	MsgStudioAuth     = "Missing or invalid authorization token"
	MsgStudioDenied   = "Access denied to this project"
	MsgStudioNotFound = "Not Found"
	// Quotas (fidelity HB6, HB7, HX1-HX3).
	MsgCompanyQuota        = "the files of your company would exceed its storage quota of %s"
	MsgTotalQuota          = "the files stored by this simulator would exceed its storage quota of %s"
	MsgPresignsOutstanding = "At most %d presigned uploads may be outstanding per company; upload to the ones you have or let them expire (24 hours)"
	MsgDownloadsPending    = "At most %d artifact downloads may be pending per company; create more once some have finished (their status leaves created)"
	MsgDownloadQuota       = "download of %s failed: %s" // the URL, MsgCompanyQuota or MsgTotalQuota
	// MsgDownloadUnreadable is all an artifact is told when the download of
	// a URL fails (fidelity HX3); the log has the reason.
	MsgDownloadUnreadable = "download of %s failed: the media could not be read (it is not reachable, not answered, or not a supported media file: WAV, MP4/MOV, WebM/Matroska, MP3, FLAC)"
	MsgNoValidFields      = "No valid fields to update"
	MsgArtifactDenied     = "Access denied to this artifact"
	MsgRateLimitMinute    = "Rate limit exceeded: %d requests per minute per API key; retry after %d seconds"
	MsgRateLimitDay       = "Rate limit exceeded: %d requests per day per API key; retry after %d seconds"
	MsgUnsupportedMedia   = "Unsupported media file %s: not a recognised audio or video container (WAV, MP4/MOV, WebM/Matroska, MP3, FLAC) with a readable duration"
	MsgUploadNotFound     = "File not found at s3Path %s: nothing was uploaded to its presigned URL"
	MsgUploadExpired      = "The presigned upload for s3Path %s expired at %s before a file was uploaded"
	MsgNoCredentials      = "Access denied to bucket %s: no storage credentials are configured for this API key (set them in the dashboard, or with POST /_sim/accounts)"
	MsgBucketNotCovered   = "Access denied to bucket %s: the storage credentials of this API key do not cover it"
)

// Upload bucket of presigned uploads and of stored artifacts.
const (
	UploadBucket   = "dubsim-artifacts"
	ArtifactBucket = "dubsim-artifacts"
)

// NewArtifact is a validated Create Artifact request.
type NewArtifact struct {
	Name      string
	Type      string
	S3Path    string
	URL       string
	Fragments []Fragment
}

// StudioProjectInput is a create or update of a studio project; nil fields
// are absent. An empty glossary id removes the assignment.
type StudioProjectInput struct {
	Name                    *string
	ManagerEmail            *string
	TranslationsGlossaryID  *string
	VoicesGlossaryID        *string
	PronunciationGlossaryID *string
}

// NewVideo is a validated Create Project Video request.
type NewVideo struct {
	Name                       string
	WorkflowType               string
	SourceArtifactID           string
	SourceLanguage             string
	TargetLanguages            []string
	BackgroundArtifactID       string
	InternationalMixArtifactID string
	VocalsHitlArtifactID       string
	Remark                     *string
	StringVariables            []StringVariable
	Pipeline                   *PipelineOptions
}

// VideoUpdate is a decoded Update Project Video request; nil fields are
// absent, Has* fields say a field was present (even null).
type VideoUpdate struct {
	Name               *string
	DstLangs           []string
	HasDstLangs        bool
	ProcessingType     *string
	Status             *string
	Remark             *string
	ClearRemark        bool // remark: null
	HasStringVariables bool
	StringVariables    []StringVariable
	HasGuidance        bool
	Guidance           *Guidance
}

// AccountStudioChange changes the studio settings of an account: each Set*
// field says whether its value (nil removes) is applied.
type AccountStudioChange struct {
	SetStorage   bool
	Storage      *StorageCredentials
	SetRateLimit bool
	RateLimit    *RateLimit
}

// StudioFilter narrows the studio dump to one company's records, or one
// studio project with its company's folders and glossaries and its videos.
type StudioFilter struct {
	CompanyID string
	ProjectID string
}

// StudioDump is every studio record the filter selects, in id order, for the
// control API and the dashboard.
type StudioDump struct {
	Companies  []Company       `json:"companies"`
	Users      []User          `json:"users"`
	Folders    []Folder        `json:"folders"`
	Glossaries []Glossary      `json:"glossaries"`
	Projects   []StudioProject `json:"projects"`
	Videos     []Video         `json:"videos"`
	Artifacts  []Artifact      `json:"artifacts"`
	// Truncated is true when a list was cut to its first MaxStateList
	// records; Totals counts each cut list whole.
	Truncated bool           `json:"truncated,omitempty"`
	Totals    map[string]int `json:"totals,omitempty"`
}
