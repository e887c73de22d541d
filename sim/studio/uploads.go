package studio

import (
	"crypto/md5"
	"crypto/subtle"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/dubsim/dubsim/sim"
	"github.com/dubsim/dubsim/sim/internal/httpx"
)

// handlePresign serves GET /api/v1/artifacts/create?fileName=...
func (a *API) handlePresign(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if !q.Has("fileName") {
		return invalid(msgFileNameMissing)
	}
	name := q.Get("fileName")
	if err := checkFileName(name); err != nil {
		return err
	}
	u, err := a.svc.PresignUpload(r.Context(), caller(r), name)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, presignView{S3Path: u.S3Path, PresignedUploadURL: a.uploadURL(r, u), ExpiresAt: sim.StudioTime(u.ExpiresAt)})
	return nil
}

func checkFileName(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return invalid(msgFileNameEmpty)
	case len(name) > 255:
		return invalid(msgFileNameLength, len(name))
	case strings.ContainsAny(name, "/\\"):
		return invalid(msgFileNamePath, name)
	case name == "." || name == "..":
		return invalid(msgFileNameDots, name)
	}
	if !utf8.ValidString(name) {
		return invalid(msgFileNameUTF8)
	}
	for _, c := range name {
		if c < ' ' || c == 0x7f {
			return invalid(msgFileNameControl)
		}
	}
	dot := strings.LastIndexByte(name, '.')
	if dot <= 0 || dot == len(name)-1 {
		return invalid(msgFileNameExtension, name)
	}
	return nil
}

// uploadURL is the presigned PUT address of an upload, on dubsim itself.
func (a *API) uploadURL(r *http.Request, u sim.Upload) string {
	q := url.Values{}
	q.Set("X-Amz-Algorithm", "AWS4-HMAC-SHA256")
	q.Set("X-Amz-Date", u.CreatedAt.UTC().Format("20060102T150405Z"))
	q.Set("X-Amz-Expires", "86400")
	q.Set("X-Amz-SignedHeaders", "host")
	q.Set("X-Amz-Signature", a.svc.UploadSignature(u))
	return a.base(r) + UploadPathPrefix + u.ID + "/" + url.PathEscape(u.FileName) + "?" + q.Encode()
}

// s3Error is the storage endpoint's error body, shaped like S3's.
type s3Error struct {
	XMLName   xml.Name `xml:"Error"`
	Code      string   `xml:"Code"`
	Message   string   `xml:"Message"`
	Resource  string   `xml:"Resource,omitempty"`
	RequestID string   `xml:"RequestId"`
}

func writeS3Error(w http.ResponseWriter, r *http.Request, status int, code, msg string) {
	b, _ := xml.Marshal(s3Error{Code: code, Message: msg, Resource: r.URL.Path, RequestID: "dubsim"})
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, xml.Header)
	_, _ = w.Write(b)
}

// handleUpload receives PUT <presignedUploadUrl>, the body streamed to disk.
func (a *API) handleUpload(w http.ResponseWriter, r *http.Request) {
	// The decoded path: the router's parameters may be raw or decoded, and
	// file names may contain '%'.
	id, file, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, UploadPathPrefix), "/")
	u, err := a.svc.Upload(r.Context(), id)
	if err != nil && !errors.Is(err, sim.ErrNotFound) {
		if a.http.Log != nil {
			a.http.Log.Error("presigned upload lookup", "err", err)
		}
		writeS3Error(w, r, http.StatusInternalServerError, "InternalError", msgStorageInternal)
		return
	}
	if err != nil || u.FileName != file {
		writeS3Error(w, r, http.StatusNotFound, "NoSuchUpload", msgStorageNoSuchUpload)
		return
	}
	sig := r.URL.Query().Get("X-Amz-Signature")
	if subtle.ConstantTimeCompare([]byte(sig), []byte(a.svc.UploadSignature(u))) != 1 {
		writeS3Error(w, r, http.StatusForbidden, "SignatureDoesNotMatch", msgStorageSignature)
		return
	}
	if !a.svc.Now().Before(u.ExpiresAt) {
		writeS3Error(w, r, http.StatusForbidden, "AccessDenied", fmt.Sprintf(msgStorageExpired, sim.StudioTime(u.ExpiresAt)))
		return
	}
	if r.ContentLength > sim.MaxArtifactBytes {
		writeS3Error(w, r, http.StatusRequestEntityTooLarge, "EntityTooLarge", msgStorageTooLarge)
		return
	}
	h := md5.New()
	body := io.TeeReader(http.MaxBytesReader(w, r.Body, sim.MaxArtifactBytes), h)
	if _, err := a.svc.ReceiveUpload(r.Context(), id, body); err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			writeS3Error(w, r, http.StatusRequestEntityTooLarge, "EntityTooLarge", msgStorageTooLarge)
			return
		}
		// What S3-compatible stores (Ceph RGW) answer for a quota.
		var qe *sim.QuotaError
		if errors.As(err, &qe) {
			writeS3Error(w, r, http.StatusForbidden, "QuotaExceeded", fmt.Sprintf(msgStorageQuota, qe.Reason))
			return
		}
		// The body did not arrive: S3's answers (fidelity HW2).
		var be *httpx.BodyError
		if errors.As(err, &be) {
			if be.Timeout {
				writeS3Error(w, r, http.StatusBadRequest, "RequestTimeout", msgStorageTimeout)
			} else {
				writeS3Error(w, r, http.StatusBadRequest, "IncompleteBody", msgStorageIncomplete)
			}
			return
		}
		// The simulator's fault: logged with file paths, answered without
		// them (fidelity HW4).
		if a.http.Log != nil {
			a.http.Log.Error("upload", "id", id, "err", err)
		}
		cause := msgStorageCauseLog
		if httpx.IsNoSpace(err) {
			cause = msgStorageCauseDisk
		}
		writeS3Error(w, r, http.StatusInternalServerError, "InternalError", fmt.Sprintf(msgStorageNotStored, cause))
		return
	}
	w.Header().Set("ETag", `"`+hex.EncodeToString(h.Sum(nil))+`"`)
	w.WriteHeader(http.StatusOK)
}
