package studio

// Messages of the studio interface (the documented ones are sim.Msg*);
// tests, goldens and the OpenAPI examples quote them byte for byte.
const (
	msgNoRoute = "No route %s %s in the studio interface; see the endpoint list in the dubsim README"

	// Artifacts; the fragment messages take the fragment's field, fragments[i].
	msgArtifactTypeSubtitles = "type must be one of video, audio, script; got \"subtitles\" (the older name of script)"
	msgArtifactType          = "type must be one of video, audio, script; got %q"
	msgArtifactSourceUpload  = "Exactly one of s3Path, url or fragments is required; to upload a local file, get a presigned URL with GET /api/v1/artifacts/create?fileName=..., PUT the file to it, then create the artifact with its s3Path"
	msgArtifactSourceMissing = "Exactly one of s3Path, url or fragments is required"
	msgArtifactSources       = "Exactly one of s3Path, url or fragments must be given; got %s"
	msgFragmentsScript       = "fragments are not supported for type script"
	msgFragments             = "fragments must be an array of objects with url or s3Path and startTime; got %s"
	msgNoFragments           = "fragments must have at least one fragment"
	msgTooManyFragments      = "fragments must have at most %d fragments; got %d"
	msgFragmentNotObject     = "%s must be an object"
	msgFragmentBothSources   = "%s must have exactly one of url or s3Path; got both"
	msgFragmentURL           = "%s.url must be a string"
	msgFragmentS3Path        = "%s.s3Path must be a string"
	msgFragmentNoSource      = "%s must have url or s3Path"
	msgFragmentStartTime     = "%s.startTime must be a number of seconds; got %s"
	msgFragmentNegativeStart = "%s.startTime must be at least 0; got %v"

	// Uploads: the checks of fileName.
	msgFileNameMissing   = "fileName query parameter is required: the real name of the file to upload, with its extension (e.g. video.mp4)"
	msgFileNameEmpty     = "fileName must not be empty"
	msgFileNameLength    = "fileName must be at most 255 bytes; got %d"
	msgFileNamePath      = "fileName must be a file name without a path; got %q"
	msgFileNameDots      = "fileName must be a file name; got %q"
	msgFileNameUTF8      = "fileName must be valid UTF-8"
	msgFileNameControl   = "fileName must not contain control characters"
	msgFileNameExtension = "fileName must have an extension, which determines the file type (e.g. video.mp4, audio.wav, script.txt); got %q"

	// The storage endpoint's XML error Message; some begin with S3's own
	// wording for the same Code.
	msgStorageInternal     = "We encountered an internal error. Please try again."
	msgStorageNoSuchUpload = "No presigned upload exists at this address; get one with GET /api/v1/artifacts/create?fileName=..."
	msgStorageSignature    = "The request signature does not match; use the presignedUploadUrl exactly as returned, query string included"
	msgStorageExpired      = "Request has expired: the presigned URL expired at %s" // the expiry, a studio timestamp
	msgStorageTooLarge     = "Your proposed upload exceeds the maximum allowed size of 5 GB"
	msgStorageNotStored    = "The upload could not be stored: %s"      // the cause
	msgStorageQuota        = "Your upload exceeds a storage quota: %s" // which quota (sim.QuotaError), docs/fidelity.md HB6
	// S3's texts for RequestTimeout and IncompleteBody (fidelity HW2); the
	// causes of msgStorageNotStored (HW4), without file paths.
	msgStorageTimeout    = "Your socket connection to the server was not read from or written to within the timeout period. Idle connections will be closed."
	msgStorageIncomplete = "You did not provide the number of bytes specified by the Content-Length HTTP header."
	msgStorageCauseDisk  = "the simulator's disk is full"
	msgStorageCauseLog   = "see the dubsim log"

	// Studio projects.
	msgManagerEmail          = "managerEmail must be an email address; got %q"
	msgTranslationGlossaryID = "Unknown field translationGlossaryId; the request field is translationsGlossaryId (the response field is translationGlossary)"

	// Videos.
	msgProcessingTypeOnCreate  = "workflowType is required (video creation names the processing type workflowType)"
	msgWorkflowType            = "workflowType must be one of %s; got %q"
	msgOriginalVideoArtifactID = "sourceArtifactId is required (originalVideoArtifactId is its older name)"
	msgSourceLanguage          = "sourceLanguage must be an ISO 639-1 code like en, or multi; got %q"
	msgSourceUnsupported       = "sourceLanguage %q is not a supported source language (the source_langs of the platform's GET /api/v1/options, or multi)"
	msgTargetUnsupported       = "%s[%d] %q is not a supported target language (the target_langs of the platform's GET /api/v1/options)"
	msgPipelineOption          = "pipelineOptions.%s must be a boolean"
	msgGuidance                = "translationGuidance must be an object {common, byLang}; got %s"
	msgGuidanceCommon          = "translationGuidance.common must be a string"
	msgGuidanceByLang          = "translationGuidance.byLang must be an object of strings keyed by target language; got %s"
	msgGuidanceByLangValue     = "translationGuidance.byLang.%s must be a string"
	msgGuidanceEmpty           = "translationGuidance must have common or byLang (send null to remove the guidance)"

	// Common field rules; the first argument is the field.
	msgNotString              = "%s must be a string; got %s"
	msgNotEmpty               = "%s must not be empty"
	msgNameLength             = "%s must be at most %d characters; got %d"
	msgFieldBytes             = "%s must be at most %d bytes; got %d"
	msgNotBoolean             = "%s must be a boolean; got %s"
	msgNotStringArray         = "%s must be an array of strings; got %s"
	msgItemNotString          = "%s[%d] must be a string; got %s"
	msgNotObject              = "%s must be an object; got %s"
	msgNoLanguages            = "%s must name at least one language"
	msgTooManyLanguages       = "%s must name at most 100 languages; got %d"
	msgLanguageCode           = "%s[%d] must be a language code like %s; got %q"
	msgLanguageTwice          = "%s[%d]: %s is listed twice"
	msgStringVariables        = "%s must be an array of {key, value} objects; got %s"
	msgTooManyStringVariables = "%s must have at most 100 entries; got %d"
	msgStringVariable         = "%s[%d] must be an object with string fields key and value; got %s"
	msgStringVariableKey      = "%s[%d].key must be a non-empty string"
	msgStringVariableValue    = "%s[%d].value must be a string"
	msgHTTPURL                = "%s must be an absolute http or https URL; got %q"
	msgS3Path                 = "%s must be a storage path like s3://bucket/path/file.mp4 (GET /api/v1/artifacts/create returns one for a presigned upload); got %q"
)
