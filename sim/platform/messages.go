package platform

// Messages of the platform interface's own checks (the documented ones are
// sim.Msg*); tests, goldens and the OpenAPI examples quote them byte for byte.
const (
	// Routes and files.
	msgNoRoute      = "No route %s %s; see the endpoint list in the dubsim README"
	msgFileNotFound = "File not found"

	// Project creation: the field, its limit, the length received (HB3).
	msgFieldCharacters = "%s must be at most %d characters; got %d"
	msgFieldBytes      = "%s must be at most %d bytes; got %d"

	// Project creation: source_script and glossary_content.
	msgScriptOrder = "%s starts at %d ms, before the previous segment ends (%d ms): segments must be in order and must not overlap"
	msgGlossaryTSV = "glossary_content line %d is not in TSV format: expected <source term><TAB><target term>"

	// Voice cloning: the multipart request and its fields.
	msgNoBoundary        = "multipart/form-data needs a boundary parameter in Content-Type"
	msgMultipartField    = "Malformed multipart body while reading %s: %v"
	msgMultipart         = "Malformed multipart body: %v"
	msgFieldTooLong      = "%s is too long"
	msgFieldNotUTF8      = "%s must be valid UTF-8 text"
	msgTextEmpty         = "text must not be empty"
	msgTextNotUTF8       = "text must be valid UTF-8"
	msgTextNothingToSay  = "text must contain something to say (letters or digits); got %q"
	msgTextTooLongRead   = "text must be at most %d characters; got more than %d"
	msgTextTooLong       = "text must be at most %d characters; got %d"
	msgCloneLanguage     = "language %q is not supported; use a target language from GET /api/v1/options (with locale, such as \"en-US\")"
	msgNoReferences      = "reference_audio_files is required: send at least one voice sample (WAV, MP3, M4A or FLAC)"
	msgTooManyReferences = "At most %d reference_audio_files are accepted"
	msgReferenceEmpty    = "%s is empty; send a WAV, MP3, M4A or FLAC voice sample"
	msgReferenceFormat   = "%s is not a supported audio file (WAV, MP3, M4A or FLAC; recognised from its content: %s)"
	msgReferenceTooLarge = "%s is larger than 50 MB"
)
