package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Sizes of derived sources: a video at 2.5 Mbit/s, an audio at 128 kbit/s.
func videoBytes(seconds int64) int64 { return seconds * 2_500_000 / 8 }
func audioBytes(seconds int64) int64 { return seconds * 128_000 / 8 }

const (
	ruleFail   = "Processing failed: the audio track could not be decoded"
	ruleRefuse = "The file at this URL cannot be processed"
)

// artRules are the fixture rules of the resolve and lifecycle tests.
func artRules(m *artMedia) {
	m.rules["https://media.test/short.mp4"] = sim.MediaRule{DurationSeconds: 12}
	m.rules["https://media.test/fail.mp4"] = sim.MediaRule{Fail: ruleFail}
	m.rules["https://media.test/refused.mp4"] = sim.MediaRule{Refuse: ruleRefuse}
	m.rules["s3://client-bucket/rule.mp4"] = sim.MediaRule{DurationSeconds: 3}
	m.rules["https://media.test/noted.mp4"] = sim.MediaRule{Note: "a rule that decides nothing"}
}

// TestResolvePart: what creation learns of one source.
func TestResolvePart(t *testing.T) {
	t.Parallel()
	h := newArtHarness(t, artOptions{})
	artRules(h.media)
	h.media.bodies["https://fetch.test/a.wav"] = artWAV
	h.media.derived["https://cdn.test/forty.mp4"] = 40 * time.Second
	none := sim.Caller{}
	creds := func(buckets ...string) sim.Caller {
		return sim.Caller{Account: sim.Account{Storage: &sim.StorageCredentials{AccessKeyID: "AKIA", Buckets: buckets}}}
	}
	tests := []struct {
		name        string
		c           sim.Caller
		typ         string
		url, s3Path string
		want        part
	}{
		{"a URL dubsim may not contact: derived", none, sim.ArtifactVideo, "https://cdn.test/forty.mp4", "", part{size: videoBytes(40), duration: secs(40 * time.Second)}},
		{"a derived audio", none, sim.ArtifactAudio, "https://cdn.test/x.wav", "", part{size: audioBytes(120), duration: secs(artDerived)}},
		{"a derived script", none, sim.ArtifactScript, "https://cdn.test/x.srt", "", part{size: 48 << 10, duration: secs(artDerived)}},
		{"a rule's duration", none, sim.ArtifactVideo, "https://media.test/short.mp4", "", part{size: videoBytes(12), duration: secs(12 * time.Second)}},
		{"a rule's failure", none, sim.ArtifactVideo, "https://media.test/fail.mp4", "", part{fail: ruleFail}},
		{"a rule's refusal", none, sim.ArtifactAudio, "https://media.test/refused.mp4", "", part{fail: ruleRefuse}},
		{"a rule that decides nothing: derived", none, sim.ArtifactVideo, "https://media.test/noted.mp4", "", part{size: videoBytes(120), duration: secs(artDerived)}},
		{"a rule of an s3Path, whatever the credentials", none, sim.ArtifactVideo, "", "s3://client-bucket/rule.mp4", part{size: videoBytes(3), duration: secs(3 * time.Second)}},
		{"a URL dubsim may fetch", none, sim.ArtifactAudio, "https://fetch.test/a.wav", "", part{download: "https://fetch.test/a.wav"}},
		{"a presigned upload", none, sim.ArtifactAudio, "", "s3://" + sim.UploadBucket + "/temp/abc/a.wav", part{upload: "abc", path: "s3://" + sim.UploadBucket + "/temp/abc/a.wav"}},
		{"a bucket without credentials", none, sim.ArtifactVideo, "", "s3://client-bucket/a.mp4", part{fail: fmt.Sprintf(sim.MsgNoCredentials, "client-bucket")}},
		{"credentials without an access key", sim.Caller{Account: sim.Account{Storage: &sim.StorageCredentials{}}}, sim.ArtifactVideo, "", "s3://client-bucket/a.mp4",
			part{fail: fmt.Sprintf(sim.MsgNoCredentials, "client-bucket")}},
		{"credentials for any bucket", creds(), sim.ArtifactVideo, "", "s3://client-bucket/a.mp4", part{size: videoBytes(120), duration: secs(artDerived)}},
		{"credentials covering the bucket", creds("other", "client-bucket"), sim.ArtifactAudio, "", "s3://client-bucket/a.wav", part{size: audioBytes(120), duration: secs(artDerived)}},
		{"credentials for other buckets", creds("other"), sim.ArtifactVideo, "", "s3://client-bucket/a.mp4", part{fail: fmt.Sprintf(sim.MsgBucketNotCovered, "client-bucket")}},
		{"the upload bucket outside temp/ is a bucket", creds(), sim.ArtifactVideo, "", "s3://" + sim.UploadBucket + "/x/a.mp4", part{size: videoBytes(120), duration: secs(artDerived)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, h.e.Artifacts.resolvePart(tc.c, tc.typ, tc.url, tc.s3Path))
		})
	}

	t.Run("fragments resolve one by one", func(t *testing.T) {
		got := h.e.Artifacts.resolveParts(none, sim.ArtifactVideo, "ignored", "", []sim.Fragment{
			{URL: "https://cdn.test/forty.mp4"}, {S3Path: "s3://" + sim.UploadBucket + "/temp/abc/a.wav"}, {URL: "https://media.test/fail.mp4"}})
		assert.Equal(t, []part{{size: videoBytes(40), duration: secs(40 * time.Second)}, {upload: "abc", path: "s3://" + sim.UploadBucket + "/temp/abc/a.wav"}, {fail: ruleFail}}, got)
		assert.Empty(t, h.e.Artifacts.resolveParts(none, sim.ArtifactVideo, "", "", []sim.Fragment{}), "an empty, non-nil list")
		assert.Equal(t, []part{{download: "https://fetch.test/a.wav"}}, h.e.Artifacts.resolveParts(none, sim.ArtifactAudio, "https://fetch.test/a.wav", "", nil))
	})

	t.Run("without media: every URL is derived from the seed", func(t *testing.T) {
		h := newArtHarness(t, artOptions{noMedia: true})
		const u = "https://fetch.test/a.wav"
		d := h.e.Artifacts.derived(u)
		assert.Equal(t, part{size: derivedSize(sim.ArtifactAudio, d), duration: secs(d)}, h.e.Artifacts.resolvePart(none, sim.ArtifactAudio, u, ""))
	})
}

// artEnd is how an artifact ends.
type artEnd struct {
	status   string
	size     int64
	duration *float64
	errMsg   string
	// processed is the size processing time follows when the artifact
	// fails (a completed artifact's is its size).
	processed int64
}

// artCase creates one artifact of the lifecycle table.
type artCase struct {
	name string
	opts artOptions
	key  string
	// create prepares the sources and returns the request; during runs
	// once the artifact is upload_started.
	create func(t *testing.T, h *artHarness) sim.NewArtifact
	during func(t *testing.T, h *artHarness, a sim.Artifact)
	// kind, method and file are the source kind, upload method and file
	// name of the stored path; upload is the upload id recorded.
	kind, method, file string
	upload             func(na sim.NewArtifact) string
	want               artEnd
	bug                string // a known bug: the case is skipped
}

func uploadIDFromPath(na sim.NewArtifact) string {
	return strings.Split(na.S3Path, "/")[4]
}

func wavLen() int64 { return int64(len(artWAV)) }

// TestArtifactLifecycle: every kind of source goes created ->
// upload_started (after ArtifactStart) -> upload_completed or
// upload_failed when processing ends (ArtifactBase plus ArtifactPerGB per
// gigabyte of the size); updatedAt is the time of each transition.
func TestArtifactLifecycle(t *testing.T) {
	t.Parallel()
	wavDur := secs(1500 * time.Millisecond)
	s3 := func(t *testing.T, h *artHarness, key, name string, content *string) string {
		return h.upload(t, key, name, content).S3Path
	}
	url := func(typ, u string) func(*testing.T, *artHarness) sim.NewArtifact {
		return func(*testing.T, *artHarness) sim.NewArtifact { return sim.NewArtifact{Name: "A", Type: typ, URL: u} }
	}
	bucket := func(typ, p string, buckets ...string) func(*testing.T, *artHarness) sim.NewArtifact {
		return func(t *testing.T, h *artHarness) sim.NewArtifact {
			if buckets != nil {
				h.storage(t, artKey, buckets...)
			}
			return sim.NewArtifact{Name: "A", Type: typ, S3Path: p}
		}
	}
	upload := func(typ, file string, content *string) func(*testing.T, *artHarness) sim.NewArtifact {
		return func(t *testing.T, h *artHarness) sim.NewArtifact {
			return sim.NewArtifact{Name: "A", Type: typ, S3Path: s3(t, h, artKey, file, content)}
		}
	}
	frags := func(typ string, fs ...func(t *testing.T, h *artHarness) sim.Fragment) func(*testing.T, *artHarness) sim.NewArtifact {
		return func(t *testing.T, h *artHarness) sim.NewArtifact {
			na := sim.NewArtifact{Name: "F", Type: typ, Fragments: []sim.Fragment{}}
			for i, f := range fs {
				fr := f(t, h)
				fr.StartTime = float64(i)
				na.Fragments = append(na.Fragments, fr)
			}
			return na
		}
	}
	fURL := func(u string) func(*testing.T, *artHarness) sim.Fragment {
		return func(*testing.T, *artHarness) sim.Fragment { return sim.Fragment{URL: u} }
	}
	fUpload := func(file string, content *string) func(*testing.T, *artHarness) sim.Fragment {
		return func(t *testing.T, h *artHarness) sim.Fragment {
			return sim.Fragment{S3Path: s3(t, h, artKey, file, content)}
		}
	}
	completed := func(size int64, d *float64) artEnd {
		return artEnd{status: sim.ArtifactCompleted, size: size, duration: d}
	}
	failed := func(msg string, processed int64) artEnd {
		return artEnd{status: sim.ArtifactFailed, errMsg: msg, processed: processed}
	}
	fromPath := uploadIDFromPath
	const fetch = "https://fetch.test/"

	tests := []artCase{
		// URLs dubsim may not contact, and fixture rules.
		{name: "url, derived video", create: url(sim.ArtifactVideo, "https://cdn.test/films/forty.mp4?sig=1"),
			kind: sim.SourceURL, file: "forty.mp4", want: completed(videoBytes(40), secs(40*time.Second))},
		{name: "url, derived audio", create: url(sim.ArtifactAudio, "https://cdn.test/voice.wav"),
			kind: sim.SourceURL, file: "voice.wav", want: completed(audioBytes(120), secs(artDerived))},
		{name: "url, derived script: no duration", create: url(sim.ArtifactScript, "https://cdn.test/subs/en.srt"),
			kind: sim.SourceURL, file: "en.srt", want: completed(48<<10, nil)},
		{name: "url, a rule's duration", create: url(sim.ArtifactVideo, "https://media.test/short.mp4"),
			kind: sim.SourceURL, file: "short.mp4", want: completed(videoBytes(12), secs(12*time.Second))},
		{name: "url, a rule's duration of an hour: processing follows the size", create: url(sim.ArtifactVideo, "https://media.test/hour.mp4"),
			kind: sim.SourceURL, file: "hour.mp4", want: completed(videoBytes(3600), secs(time.Hour))},
		{name: "url, a rule's failure", create: url(sim.ArtifactVideo, "https://media.test/fail.mp4"),
			kind: sim.SourceURL, file: "fail.mp4", want: failed(ruleFail, 0)},
		{name: "url, a rule's refusal", create: url(sim.ArtifactAudio, "https://media.test/refused.mp4"),
			kind: sim.SourceURL, file: "refused.mp4", want: failed(ruleRefuse, 0)},

		// The client's own bucket.
		{name: "bucket without storage credentials", create: bucket(sim.ArtifactVideo, "s3://client-bucket/films/a.mp4"),
			kind: sim.SourceBucket, file: "a.mp4", want: failed(fmt.Sprintf(sim.MsgNoCredentials, "client-bucket"), 0)},
		{name: "bucket covered by the credentials", create: bucket(sim.ArtifactVideo, "s3://client-bucket/films/a.mp4", "other-bucket", "client-bucket"),
			kind: sim.SourceBucket, file: "a.mp4", want: completed(videoBytes(120), secs(artDerived))},
		{name: "bucket, credentials for any bucket", create: bucket(sim.ArtifactAudio, "s3://client-bucket/a.wav", []string{}...),
			kind: sim.SourceBucket, file: "a.wav", want: completed(audioBytes(120), secs(artDerived))},
		{name: "bucket, credentials for another bucket", create: bucket(sim.ArtifactVideo, "s3://client-bucket/a.mp4", "other-bucket"),
			kind: sim.SourceBucket, file: "a.mp4", want: failed(fmt.Sprintf(sim.MsgBucketNotCovered, "client-bucket"), 0)},

		// Presigned uploads.
		{name: "presigned upload of a WAV", create: upload(sim.ArtifactAudio, "voice.wav", ptr(artWAV)), upload: fromPath,
			kind: sim.SourceUpload, file: "voice.wav", want: completed(wavLen(), wavDur)},
		{name: "presigned upload used by a colleague of the same company", key: artColleague, create: upload(sim.ArtifactVideo, "voice.wav", ptr(artWAV)),
			upload: fromPath, kind: sim.SourceUpload, file: "voice.wav", want: completed(wavLen(), wavDur)},
		{name: "presigned upload of another company", key: artOther, create: upload(sim.ArtifactAudio, "voice.wav", ptr(artWAV)), upload: fromPath,
			kind: sim.SourceUpload, file: "voice.wav", want: failed(sim.MsgUploadNotFound, 0)},
		{name: "presigned path never PUT", create: upload(sim.ArtifactVideo, "never.mp4", nil), upload: fromPath,
			kind: sim.SourceUpload, file: "never.mp4", want: failed(sim.MsgUploadNotFound, 0)},
		{name: "presigned path of the upload with another file name", create: func(t *testing.T, h *artHarness) sim.NewArtifact {
			p := s3(t, h, artKey, "take.wav", ptr(artWAV))
			return sim.NewArtifact{Name: "A", Type: sim.ArtifactAudio, S3Path: strings.TrimSuffix(p, "take.wav") + "other.wav"}
		}, upload: fromPath, kind: sim.SourceUpload, file: "other.wav", want: failed(sim.MsgUploadNotFound, 0)},
		{name: "PUT after creation, before processing ends", create: upload(sim.ArtifactAudio, "late.wav", nil), upload: fromPath,
			during: func(t *testing.T, h *artHarness, a sim.Artifact) {
				_, err := h.e.Uploads.ReceiveUpload(context.Background(), a.UploadID, strings.NewReader(artWAV))
				require.NoError(t, err)
			}, kind: sim.SourceUpload, file: "late.wav", want: completed(wavLen(), wavDur)},
		{name: "presigned upload expired before a PUT", create: func(t *testing.T, h *artHarness) sim.NewArtifact {
			p := s3(t, h, artKey, "slow.wav", nil)
			h.advance(t, sim.UploadValidity)
			return sim.NewArtifact{Name: "A", Type: sim.ArtifactAudio, S3Path: p}
		}, upload: fromPath, kind: sim.SourceUpload, file: "slow.wav", want: failed(sim.MsgUploadExpired, 0)},
		{name: "bytes that are not media, as a video", create: upload(sim.ArtifactVideo, "notes.mp4", ptr(artNotes)), upload: fromPath,
			kind: sim.SourceUpload, file: "notes.mp4", want: failed(fmt.Sprintf(sim.MsgUnsupportedMedia, "notes.mp4"), int64(len(artNotes)))},
		{name: "bytes that are not media, as a script", create: upload(sim.ArtifactScript, "notes.txt", ptr(artNotes)), upload: fromPath,
			kind: sim.SourceUpload, file: "notes.txt", want: completed(int64(len(artNotes)), nil)},
		{name: "a WAV as a script: no duration", create: upload(sim.ArtifactScript, "voice.wav", ptr(artWAV)), upload: fromPath,
			kind: sim.SourceUpload, file: "voice.wav", want: completed(wavLen(), nil)},

		// URLs dubsim downloads.
		{name: "downloaded WAV", create: url(sim.ArtifactAudio, fetch+"voice.wav"),
			kind: sim.SourceURL, file: "voice.wav", want: completed(wavLen(), wavDur)},
		{name: "downloaded MP4 as a video", create: url(sim.ArtifactVideo, fetch+"clip.mp4"),
			kind: sim.SourceURL, file: "clip.mp4", want: completed(int64(len(artMP4)), secs(4*time.Second))},
		{name: "download refused by the host", create: url(sim.ArtifactAudio, fetch+"missing.wav"),
			kind: sim.SourceURL, file: "missing.wav", want: failed("download of "+fetch+"missing.wav failed: HTTP 404 Not Found", 0)},
		{name: "downloaded bytes that are not media, as a video", create: url(sim.ArtifactVideo, fetch+"notes.mp4"),
			kind: sim.SourceURL, file: "notes.mp4", want: failed(fmt.Sprintf(sim.MsgUnsupportedMedia, "at "+fetch+"notes.mp4"), 0)},
		{name: "downloaded bytes that are not media, as a script", create: url(sim.ArtifactScript, fetch+"notes.txt"),
			kind: sim.SourceURL, file: "notes.txt", want: completed(int64(len(artNotes)), nil)},
		{name: "downloaded WAV as a script: no duration", create: url(sim.ArtifactScript, fetch+"voice.wav"),
			kind: sim.SourceURL, file: "voice.wav", want: completed(wavLen(), nil)},
		{name: "download without a blob directory", opts: artOptions{noBlobs: true}, create: url(sim.ArtifactAudio, fetch+"voice.wav"),
			kind: sim.SourceURL, file: "voice.wav", want: failed("downloads are not available in this dubsim (no blob directory)", 0)},

		// Fragments.
		{name: "fragments: two derived URLs", create: frags(sim.ArtifactVideo, fURL("https://cdn.test/forty.mp4"), fURL("https://cdn.test/twenty.mp4")),
			kind: sim.SourceFragments, method: sim.UploadFragments, file: "fragments", want: completed(videoBytes(60), secs(60*time.Second))},
		{name: "fragments: a presigned upload and a derived URL", create: frags(sim.ArtifactVideo, fUpload("intro.wav", ptr(artWAV)), fURL("https://cdn.test/twenty.mp4")),
			kind: sim.SourceFragments, method: sim.UploadFragments, file: "fragments", want: completed(wavLen()+videoBytes(20), secs(21500*time.Millisecond))},
		{name: "fragments: one fails by a rule", create: frags(sim.ArtifactVideo, fURL("https://cdn.test/ok.mp4"), fURL("https://media.test/fail.mp4")),
			kind: sim.SourceFragments, method: sim.UploadFragments, file: "fragments", want: failed(ruleFail, videoBytes(120))},
		{name: "fragments: a presigned path never PUT", create: frags(sim.ArtifactAudio, fUpload("a.wav", ptr(artWAV)), fUpload("b.wav", nil)),
			kind: sim.SourceFragments, method: sim.UploadFragments, file: "fragments", want: failed(sim.MsgUploadNotFound, wavLen())},
		{name: "fragments: two uploads of one format", create: frags(sim.ArtifactAudio, fUpload("a.wav", ptr(artWAV)), fUpload("b.wav", ptr(artWAV))),
			kind: sim.SourceFragments, method: sim.UploadFragments, file: "fragments", want: completed(2*wavLen(), secs(3*time.Second))},
		{name: "fragments: uploads of two sample rates", create: frags(sim.ArtifactAudio, fUpload("a.wav", ptr(artWAV)), fUpload("b.wav", ptr(artWAV48))),
			kind: sim.SourceFragments, method: sim.UploadFragments, file: "fragments",
			want: failed(sim.MsgFragmentMismatch, wavLen()+int64(len(artWAV48)))},
		{name: "fragments: a script's fragments are not compared", create: frags(sim.ArtifactScript, fUpload("a.txt", ptr(artNotes)), fUpload("b.wav", ptr(artWAV48))),
			kind: sim.SourceFragments, method: sim.UploadFragments, file: "fragments", want: completed(int64(len(artNotes)+len(artWAV48)), nil)},
		{name: "fragments: a download and an upload of one format", create: frags(sim.ArtifactAudio, fURL(fetch+"voice.wav"), fUpload("b.wav", ptr(artWAV))),
			kind: sim.SourceFragments, method: sim.UploadFragments, file: "fragments", want: completed(2*wavLen(), secs(3*time.Second))},
		{name: "fragments: a downloaded video then an uploaded audio", create: frags(sim.ArtifactVideo, fURL(fetch+"clip.mp4"), fUpload("b.wav", ptr(artWAV))),
			kind: sim.SourceFragments, method: sim.UploadFragments, file: "fragments", want: failed(sim.MsgFragmentNoVideo, int64(len(artMP4)+len(artWAV)))},
		{name: "fragments: two downloads of two resolutions", create: frags(sim.ArtifactVideo, fURL(fetch+"clip.mp4"), fURL(fetch+"hd.mp4")),
			kind: sim.SourceFragments, method: sim.UploadFragments, file: "fragments", want: failed(sim.MsgFragmentMismatch, int64(len(artMP4)+len(artMP4HD)))},
		{name: "fragments: a download and a path never PUT", create: frags(sim.ArtifactAudio, fURL(fetch+"voice.wav"), fUpload("b.wav", nil)),
			kind: sim.SourceFragments, method: sim.UploadFragments, file: "fragments", want: failed(sim.MsgUploadNotFound, wavLen())},
		{name: "fragments: a download and a failing rule", create: frags(sim.ArtifactAudio, fURL(fetch+"voice.wav"), fURL("https://media.test/fail.mp4")),
			kind: sim.SourceFragments, method: sim.UploadFragments, file: "fragments", want: failed(ruleFail, wavLen())},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.bug != "" {
				t.Skip("bug: " + tc.bug)
			}
			h := newArtHarness(t, tc.opts)
			artRules(h.media)
			h.media.rules["https://media.test/hour.mp4"] = sim.MediaRule{DurationSeconds: 3600}
			h.media.derived["https://cdn.test/films/forty.mp4?sig=1"] = 40 * time.Second
			h.media.derived["https://cdn.test/forty.mp4"] = 40 * time.Second
			h.media.derived["https://cdn.test/twenty.mp4"] = 20 * time.Second
			for name, body := range map[string]string{"voice.wav": artWAV, "clip.mp4": artMP4, "hd.mp4": artMP4HD, "notes.mp4": artNotes, "notes.txt": artNotes} {
				h.media.bodies[fetch+name] = body
			}
			h.media.errs[fetch+"missing.wav"] = errors.New("download of " + fetch + "missing.wav failed: HTTP 404 Not Found")
			key := tc.key
			if key == "" {
				key = artKey
			}
			c := h.caller(t, key)
			na := tc.create(t, h)
			created := h.e.Clock.Now()

			a := h.create(t, key, na)
			assert.True(t, sim.IsStudioID(a.ID), a.ID)
			assert.Equal(t, sim.ArtifactCreated, a.Status)
			assert.Equal(t, created, a.CreatedAt)
			assert.Equal(t, created, a.UpdatedAt)
			assert.Equal(t, c.Company.ID, a.CompanyID)
			assert.Equal(t, c.User.ID, a.CreatedBy)
			assert.Equal(t, key, a.APIKey)
			assert.Equal(t, na.Type, a.Type)
			assert.Equal(t, na.Name, a.Name)
			assert.Equal(t, tc.kind, a.SourceKind)
			method := tc.method
			if method == "" {
				method = sim.UploadDirectURL
			}
			assert.Equal(t, method, a.UploadMethod)
			assert.Equal(t, "uploads/"+a.ID+"/"+tc.file, a.S3Path)
			assert.Equal(t, sim.ArtifactBucket, a.S3Bucket)
			assert.Equal(t, na.URL, a.SourceURL)
			assert.Equal(t, na.S3Path, a.SourcePath)
			assert.Equal(t, na.Fragments, a.Fragments)
			if tc.upload != nil {
				assert.Equal(t, tc.upload(na), a.UploadID)
			} else {
				assert.Empty(t, a.UploadID)
			}
			start := created.Add(sim.DefaultStudioTiming.ArtifactStart)
			assert.Equal(t, start, a.StartAt)
			assert.Equal(t, start, a.DueAt, "the next transition is the start")

			h.e.Artifacts.WaitDownloads()
			got := h.get(t, key, a.ID)
			assert.Equal(t, sim.ArtifactCreated, got.Status)
			assert.Equal(t, created, got.UpdatedAt)
			assert.Nil(t, got.Size)
			assert.Nil(t, got.Duration)
			assert.False(t, got.Pending, "the download is recorded")

			h.advance(t, sim.DefaultStudioTiming.ArtifactStart)
			got = h.get(t, key, a.ID)
			assert.Equal(t, sim.ArtifactStarted, got.Status)
			assert.Equal(t, start, got.UpdatedAt, "updatedAt moves with the status")
			if tc.during != nil {
				tc.during(t, h, got)
			}

			processed := tc.want.processed
			if tc.want.status == sim.ArtifactCompleted {
				processed = tc.want.size
			}
			end := processingEnd(start, processed)
			h.advance(t, end.Sub(h.e.Clock.Now())-time.Millisecond)
			got = h.get(t, key, a.ID)
			assert.Equal(t, sim.ArtifactStarted, got.Status, "1 ms before processing ends")

			h.advance(t, time.Millisecond)
			got = h.get(t, key, a.ID)
			require.Equal(t, tc.want.status, got.Status, "%+v", got)
			assert.Equal(t, end, got.UpdatedAt, "updatedAt is start + processing time")
			assert.True(t, got.DueAt.IsZero(), "nothing more is due")
			switch tc.want.status {
			case sim.ArtifactCompleted:
				require.NotNil(t, got.Size)
				assert.Equal(t, tc.want.size, *got.Size)
				assert.Equal(t, tc.want.duration, got.Duration)
				assert.Empty(t, got.ErrorMessage)
			case sim.ArtifactFailed:
				assert.Nil(t, got.Size)
				assert.Nil(t, got.Duration)
				assert.Equal(t, expandMsg(tc.want.errMsg, got), got.ErrorMessage)
			}
			assert.Equal(t, got, h.stored(t, a.ID), "the read stored what it answered")
		})
	}
}

// expandMsg fills the templates of the lifecycle table's failures with the
// artifact's sources.
func expandMsg(msg string, a sim.Artifact) string {
	src := func(i int) string { return fragmentSource(a.Fragments[i]) }
	switch msg {
	case sim.MsgUploadNotFound:
		p := a.SourcePath
		if a.Fragments != nil {
			p = src(len(a.Fragments) - 1)
		}
		return fmt.Sprintf(msg, p)
	case sim.MsgUploadExpired:
		return fmt.Sprintf(msg, a.SourcePath, sim.StudioTime(a.CreatedAt))
	case sim.MsgFragmentNoVideo:
		return fmt.Sprintf(msg, 2, src(1), 1)
	case sim.MsgFragmentMismatch:
		if a.Type == sim.ArtifactVideo {
			return fmt.Sprintf(msg, 2, src(1), "resolution", "1920x1080", 1, "1280x720")
		}
		return fmt.Sprintf(msg, 2, src(1), "sample rate", "48000 Hz", 1, "44100 Hz")
	}
	return msg
}
