package sim

import (
	"errors"
	"fmt"
)

// Code is a transport-neutral error code. Each API maps codes to its own HTTP
// status and envelope (the platform and studio interfaces use different bodies).
type Code string

// The codes, from the client's fault to the simulator's.
const (
	CodeValidation      Code = "validation"       // the request breaks a documented rule
	CodeUnauthorized    Code = "unauthorized"     // missing or unknown API key
	CodePaymentRequired Code = "payment_required" // balance or plan limit
	CodeForbidden       Code = "forbidden"        // feature not enabled for the account
	CodeAccessDenied    Code = "access_denied"    // like forbidden, with an error-only body (voice cloning)
	CodeNotFound        Code = "not_found"        // unknown resource, or another account's
	CodeVideoInfo       Code = "video_info"       // the source video cannot be read
	CodeConflict        Code = "conflict"         // a request with this idempotency key is in flight
	CodeIdempotency     Code = "idempotency"      // idempotency key reused with another request
	CodeTooLarge        Code = "too_large"        // request body over the limit
	CodeRateLimited     Code = "rate_limited"     // over the key's request rate limit
	CodeMethod          Code = "method"           // method not allowed on the route
	CodeRoute           Code = "route"            // no such route
	CodeInternal        Code = "internal"         // a bug or an I/O failure; message masked
)

// Error is the domain error every layer returns; APIs render it.
type Error struct {
	Code    Code
	Message string
	// Detail says more than Message where Message is a documented text
	// that must stay byte for byte (which item, which values); the APIs
	// send it outside the body, in a response header.
	Detail string
}

func (e *Error) Error() string { return e.Message }

// WithDetail sets the detail of e and returns e.
func (e *Error) WithDetail(format string, args ...any) *Error {
	e.Detail = fmt.Sprintf(format, args...)
	return e
}

// Errorf builds an *Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err, CodeInternal for foreign errors and ""
// for nil.
func ErrorCode(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// ErrorMessage returns the message of a domain error, or "" for foreign errors.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return ""
}

// ErrorDetail returns the detail of a domain error, or "".
func ErrorDetail(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Detail
	}
	return ""
}

// ErrNotFound is returned by stores for a missing record.
var ErrNotFound = errors.New("sim: record not found")

// Messages that clients and tests match on. The first group is quoted from
// the provider's public documentation; keep those byte for byte.
const (
	MsgInvalidAPIKey        = "Invalid API key"
	MsgInsufficientBalance  = "Insufficient balance for this project"
	MsgProjectNotFound      = "Project not found"
	MsgDeleteInProgress     = "Cannot delete project while processing is in progress"
	MsgUnknownVoice         = "Unknown voice %s"
	MsgSpeakerNotInSpeakers = "Speaker ID %d referenced in script but not found in target_speakers"
	MsgInvalidTiming        = "Invalid timing: start_ms must be less than end_ms"
	// DetailInvalidTiming is the X-Dubsim-Error-Detail of MsgInvalidTiming.
	DetailInvalidTiming = "%s: start_ms %d, end_ms %d"
	MsgRequired         = "%s is required"

	MsgRetranslationNotReady  = "Project %s cannot be re-translated while its status is %s; re-translation needs status ready"
	MsgRetranslationDisabled  = "Re-translation is not enabled for this account; contact support@dubformer.ai to enable it"
	MsgSoundalikeSubscription = "Soundalike voices require an active subscription"
	MsgEmotionalSubscription  = "Emotional transfer voices require an active subscription"
	MsgHigherTier             = "%s requires a Pro subscription or higher"
	MsgScriptAndContent       = "source_script cannot be combined with source_script_content"
	MsgEmotionalLanguage      = "use_emotional_transfer supports only English, Spanish, French, German, Italian and Portuguese targets; got %s"
	MsgVoiceLanguage          = "Voice %s does not support the project's target language %s"
	MsgSpecialVoiceLanguage   = "Voice %s is not supported for target language %s"
	MsgDuplicateSpeaker       = "Duplicate speaker ID %d in target_speakers"
	MsgOverlap                = "Overlapping segments: target_script[%d] (%d-%d ms) overlaps target_script[%d] (%d-%d ms)"
	MsgEmptyText              = "%s.text must not be empty"
	MsgContentType            = "Content-Type must be application/json for a request with a JSON body"
	MsgMalformedJSON          = "Malformed JSON body: %s"
	MsgBodyNotObject          = "Request body must be a JSON object"
	MsgBodyTooLarge           = "Request body exceeds the limit of %d bytes"
	MsgUnknownField           = "Unknown field %s"
	MsgWrongType              = "%s must be %s; got %s" // field, expected type, JSON kind received
	MsgIdempotencyMismatch    = "Idempotency-Key %q was already used with a different request (method, path or body); use a new key"
	MsgIdempotencyInFlight    = "A request with Idempotency-Key %q is still being processed; retry after it completes"
	MsgInternal               = "Internal error; see the dubsim log"
	MsgVideoUnreadable        = "Unable to read video info from %s: %s"

	MsgCloningDisabled  = "Voice cloning API is not enabled for your account. Please contact your sales manager to enable it."
	MsgCloningPlan      = "Voice cloning requires a PRO subscription or higher. Please contact your sales manager to upgrade your plan."
	MsgCloningMultipart = "This endpoint takes multipart/form-data with the fields text, language and one or more reference_audio_files; got Content-Type %q"
)
