#!/usr/bin/env bash
# A walkthrough of the dubbing API with curl: the platform interface (balance,
# a dubbing project, its dubbed audio) and the studio interface (a presigned
# upload, an artifact, a project and a video). Run it against dubsim started
# with --time-scale 0 (a frozen clock):
#
#   DUBSIM_URL=http://localhost:8080 DUBSIM_API_KEY=dubsim-pro bash examples/curl/walkthrough.sh
#
# Needs bash, curl 7.76 or later (--fail-with-body), grep, sed and od; no jq:
# fields are read with grep and sed, which is enough for dubsim's compact
# one-line JSON. For anything else, use jq (jq -r .project_id).
# Calls under /_sim/ are dubsim's control API, which the real service does
# not have: there, instead of advancing the clock, you simply wait.
set -euo pipefail

BASE=${DUBSIM_URL:-http://localhost:8080}
KEY=${DUBSIM_API_KEY:-dubsim-pro}
# A studio project's manager must be a user of the key's company; this is
# dubsim-pro's own user (fixtures/studio.json).
MANAGER=${DUBSIM_MANAGER_EMAIL:-priya.raman@initech-learning.example}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

fail() { echo "walkthrough failed: $*" >&2; exit 1; }

# call CURL_ARGS...: prints the body of a 2xx answer; any other answer (or no
# answer) stops the script with the status and the body.
call() {
  local out
  out=$(curl -sS --fail-with-body --max-time 30 "$@") || fail "curl ${*: -1}: ${out:-no answer}"
  printf '%s\n' "$out"
}

# api METHOD PATH [JSON]: the dubbing API with the key. A body is sent as JSON;
# every POST carries a fresh Idempotency-Key (send the same one to retry).
api() {
  local args=(-X "$1" -H "Authorization: Bearer $KEY")
  if [ $# -ge 3 ]; then args+=(-H 'Content-Type: application/json' --data-binary "$3"); fi
  if [ "$1" = POST ]; then args+=(-H "Idempotency-Key: $(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"); fi
  call "${args[@]}" "$BASE$2"
}

# advance SECONDS: moves dubsim's simulated clock (control API, no key).
advance() { call -X POST -H 'Content-Type: application/json' -d "{\"seconds\":$1}" "$BASE/_sim/clock/advance" >/dev/null; }

# str NAME JSON / num NAME JSON: the first "NAME" field of the JSON, a string
# or a number (the top-level fields of these answers come first). Use them in
# assignments, not inside echo "...$(...)": a failure there would not stop
# the script.
str() {
  local v
  v=$(printf '%s' "$2" | grep -o "\"$1\":\"[^\"]*\"" | sed -n '1s/^.*:"\(.*\)"$/\1/p') || true
  [ -n "$v" ] || fail "no string field $1 in: $2"
  printf '%s\n' "$v"
}
num() {
  local v
  v=$(printf '%s' "$2" | grep -o "\"$1\":[0-9][0-9.]*" | sed -n '1s/^.*://p') || true
  [ -n "$v" ] || fail "no number field $1 in: $2"
  printf '%s\n' "$v"
}

# Platform: the balance, then a dubbing project (its minutes are charged now).
BALANCE=$(api GET /api/v1/balance)
BALANCE=$(num balance_minutes "$BALANCE")
echo "balance: $BALANCE minutes"
CREATED=$(api POST /api/v1/projects '{"name":"Example","source_lang":"en","target_lang":"de-DE","source_video_url":"https://media.dubsim.test/short.mp4"}')
ID=$(str project_id "$CREATED")
COST=$(num cost_minutes "$CREATED")
BALANCE=$(num balance_minutes "$CREATED")
echo "created project $ID (cost $COST min, balance $BALANCE)"

# Poll until the project leaves in_progress (there are no webhooks).
for i in $(seq 20); do
  PROJECT=$(api GET "/api/v1/projects/$ID")
  STATUS=$(str status "$PROJECT")
  echo "project $ID: $STATUS"
  [ "$STATUS" = in_progress ] || break
  advance 30 # real service: sleep 15
done
[ "$STATUS" = ready ] || fail "project $ID: status $STATUS: $PROJECT"
AUDIO_URL=$(str output_tts_audio_url "$PROJECT")
call -o "$TMP/dubbed.wav" "$AUDIO_URL" >/dev/null # output URLs need no key
[ "$(head -c 4 "$TMP/dubbed.wav")" = RIFF ] && [ "$(tail -c +9 "$TMP/dubbed.wav" | head -c 4)" = WAVE ] ||
  fail "the dubbed audio is not a RIFF/WAVE file"
echo "downloaded dubbed audio: $(wc -c <"$TMP/dubbed.wav" | tr -d ' ') bytes, RIFF/WAVE"

# Studio: upload a local file to a presigned URL, then make an artifact of its s3Path.
PRESIGN=$(api GET '/api/v1/artifacts/create?fileName=clip.wav')
S3PATH=$(str s3Path "$PRESIGN")
echo "presigned upload: $S3PATH"
# One second of silence: a 44-byte header (16-bit mono PCM, 8 kHz) and 16000 zero bytes.
{
  printf 'RIFF\xa4\x3e\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x40\x1f\x00\x00\x80\x3e\x00\x00\x02\x00\x10\x00'
  printf 'data\x80\x3e\x00\x00'
  head -c 16000 /dev/zero
} >"$TMP/clip.wav"
# No Authorization header here: the URL's signature is the credential.
UPLOAD_URL=$(str presignedUploadUrl "$PRESIGN")
call -T "$TMP/clip.wav" -H 'Content-Type: audio/wav' "$UPLOAD_URL" >/dev/null
echo "uploaded clip.wav ($(wc -c <"$TMP/clip.wav" | tr -d ' ') bytes)"
ARTIFACT=$(api POST /api/v1/artifacts/create "{\"name\":\"Example clip\",\"type\":\"audio\",\"s3Path\":\"$S3PATH\"}")
ART=$(str id "$ARTIFACT")
STATUS=$(str status "$ARTIFACT")
echo "created artifact $ART: $STATUS"
for i in $(seq 20); do
  [ "$STATUS" != upload_completed ] || break
  [ "$STATUS" != upload_failed ] || fail "artifact $ART: $ARTIFACT"
  advance 5 # real service: wait
  ARTIFACT=$(api GET "/api/v1/artifacts/$ART")
  STATUS=$(str status "$ARTIFACT")
  echo "artifact $ART: $STATUS"
done
[ "$STATUS" = upload_completed ] || fail "artifact $ART: status $STATUS"
SIZE=$(num size "$ARTIFACT")
DURATION=$(num duration "$ARTIFACT")
echo "artifact size $SIZE bytes, duration $DURATION s"

# A studio project (on dubsim's shared address, managerEmail marks the body as
# studio) and a video made from the artifact.
PROJ=$(api POST /api/v1/projects "{\"name\":\"Example launch\",\"managerEmail\":\"$MANAGER\"}")
PROJ_ID=$(str id "$PROJ")
STATUS=$(str status "$PROJ")
echo "created studio project $PROJ_ID: $STATUS"
VIDEO=$(api POST "/api/v1/projects/$PROJ_ID/videos/create" \
  "{\"name\":\"Example video\",\"workflowType\":\"dubbing\",\"sourceArtifactId\":\"$ART\",\"sourceLanguage\":\"en\",\"targetLanguages\":[\"de-DE\"]}")
VIDEO_ID=$(str id "$VIDEO")
STATUS=$(str status "$VIDEO")
echo "created video $VIDEO_ID: $STATUS"

# dubsim only: what the conformance report says about this client.
REPORT=$(call -G --data-urlencode "api_key=$KEY" "$BASE/_sim/report")
FINDINGS=$(num findings "$REPORT") # the summary's count comes before the list
REQUESTS=$(num requests "$REPORT")
echo "report: $FINDINGS findings ($REQUESTS requests)"
echo done
