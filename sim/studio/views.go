package studio

import (
	"net/http"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/internal/httpx"
)

// Field order follows the provider's examples.

type ref struct {
	ID string `json:"id"`
}

type namedRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// artifactHead is what the create and get answers of an artifact share.
type artifactHead struct {
	ID           string   `json:"id"`
	Name         string   `json:"name"`
	Type         string   `json:"type"`
	Status       string   `json:"status"`
	UploadMethod string   `json:"uploadMethod"`
	Size         *int64   `json:"size"`
	Duration     *float64 `json:"duration"`
	ErrorMessage *string  `json:"errorMessage"`
}

// artifactCreated is the create response: s3Bucket, and names.
type artifactCreated struct {
	artifactHead
	S3Path    string   `json:"s3Path"`
	S3Bucket  string   `json:"s3Bucket"`
	CreatedAt string   `json:"createdAt"`
	UpdatedAt string   `json:"updatedAt"`
	Company   namedRef `json:"company"`
	CreatedBy namedRef `json:"createdBy"`
}

// artifactView is the Get Artifact response of the newest docs.
type artifactView struct {
	artifactHead
	CreatedAt string `json:"createdAt"`
	UpdatedAt string `json:"updatedAt"`
	S3Path    string `json:"s3Path"`
	Company   ref    `json:"company"`
	CreatedBy ref    `json:"createdBy"`
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func viewArtifact(a sim.Artifact) artifactView {
	return artifactView{artifactHead: artifactHead{ID: a.ID, Name: a.Name, Type: a.Type, Status: a.Status, UploadMethod: a.UploadMethod,
		Size: a.Size, Duration: a.Duration, ErrorMessage: nullable(a.ErrorMessage)},
		CreatedAt: sim.StudioTime(a.CreatedAt), UpdatedAt: sim.StudioTime(a.UpdatedAt), S3Path: a.S3Path,
		Company: ref{a.CompanyID}, CreatedBy: ref{a.CreatedBy}}
}

func viewArtifactCreated(a sim.Artifact, c sim.Caller) artifactCreated {
	v := viewArtifact(a)
	return artifactCreated{artifactHead: v.artifactHead, S3Path: v.S3Path, S3Bucket: a.S3Bucket,
		CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt,
		Company: namedRef{c.Company.ID, c.Company.Name}, CreatedBy: namedRef{c.User.ID, c.User.Name}}
}

type presignView struct {
	S3Path             string `json:"s3Path"`
	PresignedUploadURL string `json:"presignedUploadUrl"`
	ExpiresAt          string `json:"expiresAt"`
}

type projectView struct {
	ID                    string  `json:"id"`
	Name                  string  `json:"name"`
	Status                string  `json:"status"`
	TranslationGlossary   *string `json:"translationGlossary"`
	VoicesGlossary        *string `json:"voicesGlossary"`
	PronunciationGlossary *string `json:"pronunciationGlossary"`
	Remark                *string `json:"remark"`
	ClientName            *string `json:"clientName"`
	FolderID              *string `json:"folderId"`
	ProjectURL            string  `json:"projectUrl"`
	CreatedAt             string  `json:"createdAt"`
	UpdatedAt             string  `json:"updatedAt"`
}

func (a *API) viewProject(r *http.Request, p sim.StudioProject) projectView {
	return projectView{ID: p.ID, Name: p.Name, Status: p.Status,
		TranslationGlossary: nullable(p.TranslationGlossary), VoicesGlossary: nullable(p.VoicesGlossary),
		PronunciationGlossary: nullable(p.PronunciationGlossary), Remark: nullable(p.Remark),
		ClientName: nullable(p.ClientName), FolderID: nullable(p.FolderID),
		ProjectURL: a.base(r) + "/projects/" + p.ID,
		CreatedAt:  sim.StudioTime(p.CreatedAt), UpdatedAt: sim.StudioTime(p.UpdatedAt)}
}

// videoView is Get Project Video and each entry of List Project Videos.
type videoView struct {
	ID             string   `json:"id"`
	Name           string   `json:"name"`
	Status         string   `json:"status"`
	ProcessingType string   `json:"processingType"`
	SrcLang        string   `json:"srcLang"`
	DstLangs       []string `json:"dstLangs"`
	VideoURL       string   `json:"videoUrl"`
	videoTail
}

// videoTail is what the create and get answers of a video end with.
type videoTail struct {
	VideoDuration   *float64             `json:"videoDuration"`
	Remark          *string              `json:"remark"`
	StringVariables []sim.StringVariable `json:"stringVariables"`
	CreatedAt       string               `json:"createdAt"`
	UpdatedAt       string               `json:"updatedAt"`
}

// videoUpdated is the update response: the Get shape plus the translation
// guidance.
type videoUpdated struct {
	videoView
	TranslationGuidance *sim.Guidance `json:"translationGuidance"`
}

// videoCreated is the create response of the docs: workflowType instead of
// processingType.
type videoCreated struct {
	ID           string   `json:"id"`
	VideoURL     string   `json:"videoUrl"`
	Name         string   `json:"name"`
	Status       string   `json:"status"`
	WorkflowType string   `json:"workflowType"`
	SrcLang      string   `json:"srcLang"`
	DstLangs     []string `json:"dstLangs"`
	videoTail
}

func (a *API) viewVideo(r *http.Request, v sim.Video) videoView {
	langs := v.DstLangs
	if langs == nil {
		langs = []string{}
	}
	return videoView{ID: v.ID, Name: v.Name, Status: v.Status, ProcessingType: v.ProcessingType, SrcLang: v.SrcLang,
		DstLangs: langs, VideoURL: a.base(r) + "/api/v1/projects/" + v.ProjectID + "/videos/" + v.ID,
		videoTail: videoTail{VideoDuration: v.DurationSeconds, Remark: v.Remark, StringVariables: v.StringVariables,
			CreatedAt: sim.StudioTime(v.CreatedAt), UpdatedAt: sim.StudioTime(v.UpdatedAt)}}
}

func (a *API) viewVideoCreated(r *http.Request, v sim.Video) videoCreated {
	g := a.viewVideo(r, v)
	return videoCreated{ID: g.ID, VideoURL: g.VideoURL, Name: g.Name, Status: g.Status, WorkflowType: g.ProcessingType,
		SrcLang: g.SrcLang, DstLangs: g.DstLangs, videoTail: g.videoTail}
}

func (a *API) base(r *http.Request) string { return httpx.BaseURL(r, a.publicURL) }
