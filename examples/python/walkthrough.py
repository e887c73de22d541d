#!/usr/bin/env python3
"""A walkthrough of the dubbing API with the Python 3 standard library only.

The platform interface (balance, a dubbing project, its dubbed audio) and the
studio interface (a presigned upload, an artifact, a project and a video).
Run it against dubsim started with --time-scale 0 (a frozen clock):

    DUBSIM_URL=http://localhost:8080 DUBSIM_API_KEY=dubsim-pro python3 examples/python/walkthrough.py

Calls under /_sim/ are dubsim's control API, which the real service does not
have: there, instead of advancing the clock, you simply wait.
"""
import io
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
import uuid
import wave

BASE = os.environ.get("DUBSIM_URL") or "http://localhost:8080"
KEY = os.environ.get("DUBSIM_API_KEY") or "dubsim-pro"
# A studio project's manager must be a user of the key's company; this is
# dubsim-pro's own user (fixtures/studio.json).
MANAGER = os.environ.get("DUBSIM_MANAGER_EMAIL") or "priya.raman@initech-learning.example"


def fail(message):
    sys.exit(f"walkthrough failed: {message}")


def send(method, url, body=None, headers=None):
    """Makes one request and returns the body of a 2xx answer; any other answer ends the program."""
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.read()
    except urllib.error.HTTPError as e:  # a 4xx or 5xx answer
        fail(f"{method} {url}: {e.code} {e.reason}: {e.read()[:300].decode(errors='replace').strip()}")
    except urllib.error.URLError as e:  # no answer
        fail(f"{method} {url}: {e.reason}")


def api(method, path, body=None):
    """Calls the dubbing API with the key and returns the decoded JSON answer.

    A body is sent as JSON; every POST carries a fresh Idempotency-Key (when
    you retry a POST, send the same key again).
    """
    headers = {"Authorization": f"Bearer {KEY}"}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    if method == "POST":
        headers["Idempotency-Key"] = str(uuid.uuid4())
    return json.loads(send(method, BASE + path, data, headers))


def advance(seconds):
    """Moves dubsim's simulated clock (control API, no key)."""
    send("POST", BASE + "/_sim/clock/advance", json.dumps({"seconds": seconds}).encode(),
         {"Content-Type": "application/json"})


def silent_wav(seconds):
    """A 16-bit mono 8 kHz PCM WAV file of silence."""
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(b"\0\0" * 8000 * seconds)
    return buf.getvalue()


def main():
    sys.stdout.reconfigure(line_buffering=True)  # keep output and errors in order when piped
    # Platform: the balance, then a dubbing project (its minutes are charged now).
    print(f"balance: {api('GET', '/api/v1/balance')['balance_minutes']:g} minutes")
    created = api("POST", "/api/v1/projects", {"name": "Example", "source_lang": "en", "target_lang": "de-DE",
                                               "source_video_url": "https://media.dubsim.test/short.mp4"})
    pid = created["project_id"]
    print(f"created project {pid} (cost {created['cost_minutes']:g} min, balance {created['balance_minutes']:g})")

    # Poll until the project leaves in_progress (there are no webhooks).
    for _ in range(20):
        project = api("GET", f"/api/v1/projects/{pid}")
        print(f"project {pid}: {project['status']}")
        if project["status"] != "in_progress":
            break
        advance(30)  # real service: time.sleep(15)
    if project["status"] != "ready":
        fail(f"project {pid}: status {project['status']} {project.get('error_message', '')}")
    audio = send("GET", project["output_tts_audio_url"])  # output URLs need no key: they are signed
    if audio[:4] != b"RIFF" or audio[8:12] != b"WAVE":
        fail(f"the dubbed audio is not a RIFF/WAVE file ({len(audio)} bytes)")
    print(f"downloaded dubbed audio: {len(audio)} bytes, RIFF/WAVE")

    # Studio: upload a local file to a presigned URL, then make an artifact of its s3Path.
    presign = api("GET", "/api/v1/artifacts/create?" + urllib.parse.urlencode({"fileName": "clip.wav"}))
    print(f"presigned upload: {presign['s3Path']}")
    clip = silent_wav(1)
    # No Authorization header here: the URL's signature is the credential.
    send("PUT", presign["presignedUploadUrl"], clip, {"Content-Type": "audio/wav"})
    print(f"uploaded clip.wav ({len(clip)} bytes)")
    artifact = api("POST", "/api/v1/artifacts/create", {"name": "Example clip", "type": "audio", "s3Path": presign["s3Path"]})
    aid = artifact["id"]
    print(f"created artifact {aid}: {artifact['status']}")
    for _ in range(20):
        if artifact["status"] in ("upload_completed", "upload_failed"):
            break
        advance(5)  # real service: wait
        artifact = api("GET", f"/api/v1/artifacts/{aid}")
        print(f"artifact {aid}: {artifact['status']}")
    if artifact["status"] != "upload_completed":
        fail(f"artifact {aid}: status {artifact['status']} {artifact.get('errorMessage') or ''}")
    print(f"artifact size {artifact['size']} bytes, duration {artifact['duration']:g} s")

    # A studio project (on dubsim's shared address, managerEmail marks the body
    # as studio) and a video made from the artifact.
    proj = api("POST", "/api/v1/projects", {"name": "Example launch", "managerEmail": MANAGER})
    print(f"created studio project {proj['id']}: {proj['status']}")
    video = api("POST", f"/api/v1/projects/{proj['id']}/videos/create", {
        "name": "Example video", "workflowType": "dubbing", "sourceArtifactId": aid,
        "sourceLanguage": "en", "targetLanguages": ["de-DE"]})
    print(f"created video {video['id']}: {video['status']}")

    # dubsim only: what the conformance report says about this client.
    report = json.loads(send("GET", BASE + "/_sim/report?" + urllib.parse.urlencode({"api_key": KEY})))
    print(f"report: {report['summary']['findings']} findings ({report['summary']['requests']} requests)")
    for f in report["findings"]:
        print(f"  {f['severity']}: {f['rule']}")
    print("done")


if __name__ == "__main__":
    try:
        main()
    except (KeyError, TypeError, ValueError) as e:  # an answer without an expected field
        fail(f"unexpected answer: {e!r}")
