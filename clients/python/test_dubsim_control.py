"""Tests of dubsim_control against a real dubsim.

    DUBSIM_URL=http://127.0.0.1:8080 python3 -m unittest -v test_dubsim_control

DUBSIM_URL names the dubsim to use (it is required: the tests do not start one);
DUBSIM_CONTROL_TOKEN its control token when it was started with one. The tests freeze
the clock, reset the simulator and clear its fault rules: use a dubsim of their own.
clients/clients_test.go runs them against the real binary, with and without a token.
"""

from __future__ import annotations

import json
import os
import re
import unittest
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, Optional, Tuple

import dubsim_control
from dubsim_control import Client, DubsimError

SHORT_VIDEO = "https://media.dubsim.test/short.mp4"  # 12 s, 1 minute charged


def platform(method: str, path: str, key: str, body: Optional[Dict[str, Any]] = None) -> Tuple[int, Any]:
    """One call of the simulated service's API (not the control API): status and JSON."""
    return api(os.environ["DUBSIM_URL"].rstrip("/"), method, path, key, body)


def api(base: str, method: str, path: str, key: str, body: Optional[Dict[str, Any]] = None) -> Tuple[int, Any]:
    """One call of the simulated service's API at ``base``: status and JSON."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data, method=method)
    req.add_header("Authorization", "Bearer " + key)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as e:
        with e:
            return e.code, json.loads(e.read() or b"null")


def create_project(key: str, url: str = SHORT_VIDEO) -> str:
    status, body = platform(
        "POST", "/api/v1/projects", key, {"source_lang": "en", "target_lang": "fr-FR", "source_video_url": url}
    )
    if status != 200:
        raise AssertionError("create project: %d %s" % (status, body))
    return str(body["project_id"])


def project_status(key: str, project_id: str) -> Dict[str, Any]:
    status, body = platform("GET", "/api/v1/projects/" + project_id, key)
    if status != 200:
        raise AssertionError("get project %s: %d %s" % (project_id, status, body))
    return body


@unittest.skipUnless(os.environ.get("DUBSIM_URL"), "DUBSIM_URL names no running dubsim")
class ControlClientTest(unittest.TestCase):
    sim: Client

    @classmethod
    def setUpClass(cls) -> None:
        cls.sim = Client()  # DUBSIM_URL and DUBSIM_CONTROL_TOKEN
        cls.sim.clock.freeze()
        cls.sim.faults.clear()

    def setUp(self) -> None:
        self.key = self.sim.accounts.create(plan="pro", balance_minutes=100)["api_key"]

    def tearDown(self) -> None:
        self.sim.faults.clear()

    def test_health_and_work(self) -> None:
        h = self.sim.health()
        self.assertEqual(h["status"], "ok")
        self.assertIn("now", h)
        self.assertIsInstance(self.sim.work(), list)

    def test_clock(self) -> None:
        ck = self.sim.clock.freeze()
        self.assertTrue(ck["frozen"])
        start = dubsim_control._parse_time(self.sim.clock.get()["now"])
        after = self.sim.clock.advance(90)
        self.assertEqual(dubsim_control._parse_time(after["now"]) - start, timedelta(seconds=90))
        target = start + timedelta(hours=1, milliseconds=250)
        moved = self.sim.clock.advance_to(target)
        self.assertEqual(dubsim_control._parse_time(moved["now"]), target)
        with self.assertRaises(ValueError):
            self.sim.clock.advance_to(start)
        try:
            ck = self.sim.clock.set_scale(60)
            self.assertFalse(ck["frozen"])
            self.assertEqual(ck["time_scale"], 60)
            self.assertTrue(self.sim.clock.freeze()["frozen"])
            ck = self.sim.clock.resume()
            self.assertFalse(ck["frozen"])
            self.assertEqual(ck["time_scale"], 60)
        finally:
            self.sim.clock.freeze()

    def test_project_becomes_ready(self) -> None:
        pid = create_project(self.key)
        self.assertEqual(project_status(self.key, pid)["status"], "in_progress")
        self.sim.clock.advance(3600)
        self.assertEqual(project_status(self.key, pid)["status"], "ready")
        st = self.sim.state(api_key=self.key)
        self.assertEqual([p["status"] for p in st["projects"]], ["ready"])
        self.assertEqual([a["balance_minutes"] for a in st["accounts"]], [99])

    def test_next_due(self) -> None:
        pid = create_project(self.key)
        ck = self.sim.clock.next_due()
        self.assertEqual(ck["transition"]["to"], "ready")
        self.sim.clock.advance(3600)
        self.assertEqual(project_status(self.key, pid)["status"], "ready")
        with self.assertRaises(DubsimError) as cm:
            self.sim.clock.next_due()
        self.assertEqual((cm.exception.status, cm.exception.error), (409, "ConflictError"))

    def test_force_project(self) -> None:
        pid = create_project(self.key)
        forced = self.sim.outcomes.force_project(pid, dubsim_control.OUTCOME_ERROR, "No speech detected", now=True)
        self.assertEqual(forced["status"], "error")
        got = project_status(self.key, pid)
        self.assertEqual((got["status"], got["error_message"]), ("error", "No speech detected"))
        with self.assertRaises(DubsimError) as cm:
            self.sim.outcomes.force_project(pid, "ready")
        self.assertEqual(cm.exception.status, 409)

    def test_outcome_rules(self) -> None:
        rule = self.sim.outcomes.add_rule("error", api_key=self.key, count=1, error_message="TTS quota exceeded")
        other = self.sim.outcomes.add_rule("ready", api_key=self.key, source_url_pattern="*/never/*")
        ids = [r["id"] for r in self.sim.outcomes.rules()]
        self.assertIn(rule["id"], ids)
        self.assertIn(other["id"], ids)
        self.sim.outcomes.remove_rule(other["id"])
        pid = create_project(self.key)
        self.sim.clock.advance(3600)
        got = project_status(self.key, pid)
        self.assertEqual((got["status"], got["error_message"]), ("error", "TTS quota exceeded"))
        ids = [r["id"] for r in self.sim.outcomes.rules()]
        self.assertNotIn(rule["id"], ids)  # used up
        self.assertNotIn(other["id"], ids)  # removed
        with self.assertRaises(DubsimError) as cm:
            self.sim.outcomes.remove_rule(other["id"])
        self.assertEqual((cm.exception.status, cm.exception.error), (404, "NotFoundError"))

    def test_studio_outcomes(self) -> None:
        status, art = platform(
            "POST",
            "/api/v1/artifacts/create",
            self.key,
            {"name": "Clip", "type": "video", "url": "https://media.dubsim.test/clip.mp4"},
        )
        self.assertEqual(status, 200, art)
        forced = self.sim.outcomes.force_artifact(art["id"], "ready", now=True, size=1234, duration_seconds=42.5)
        self.assertEqual(forced["status"], "upload_completed")
        status, proj = platform("POST", "/api/v1/projects", self.key, {"name": "Launch"})
        self.assertEqual(status, 200, proj)
        status, video = platform(
            "POST",
            "/api/v1/projects/%s/videos/create" % proj["id"],
            self.key,
            {
                "name": "Teaser",
                "workflowType": "dubbing",
                "sourceArtifactId": art["id"],
                "sourceLanguage": "en",
                "targetLanguages": ["es-ES"],
            },
        )
        self.assertEqual(status, 200, video)
        self.assertEqual(video["status"], "new")
        v = self.sim.outcomes.set_video_status(video["id"], "completed")
        self.assertEqual((v["video_id"], v["status"]), (video["id"], "completed"))

    def test_faults(self) -> None:
        fault = self.sim.faults.add(
            {"method": "POST", "path": "/api/v1/projects", "api_key": self.key, "count": 1},
            action={"type": "error", "status": 503, "message": "Try again later"},
        )
        self.assertEqual((fault["state"], fault["remaining"], fault["hits"]), ("active", 1, 0))
        status, body = platform(
            "POST", "/api/v1/projects", self.key, {"source_lang": "en", "target_lang": "fr-FR", "source_video_url": SHORT_VIDEO}
        )
        self.assertEqual(status, 503)
        self.assertEqual(body["message"], "Try again later")
        listed = {f["id"]: f for f in self.sim.faults.list()}
        self.assertEqual((listed[fault["id"]]["state"], listed[fault["id"]]["hits"]), ("spent", 1))
        self.sim.faults.remove(fault["id"])
        self.assertNotIn(fault["id"], [f["id"] for f in self.sim.faults.list()])
        self.sim.faults.add(path="/api/v1/voices", action={"type": "latency", "latency_ms": 1})
        self.sim.faults.add(path="/api/v1/options", action={"type": "drop"})
        self.assertEqual(self.sim.faults.clear(), 2)
        self.assertEqual(self.sim.faults.list(), [])

    def test_journal_verify_report(self) -> None:
        self.sim.journal.clear()
        self.sim.faults.add(method="POST", path="/api/v1/projects", api_key=self.key, count=1, action={"type": "error", "status": 503})
        platform("POST", "/api/v1/projects", self.key, {"source_lang": "en", "target_lang": "fr-FR", "source_video_url": SHORT_VIDEO})
        pid = create_project(self.key)
        reqs = self.sim.journal.requests(api_key=self.key, method="POST", path="/api/v1/projects")
        self.assertEqual([r["status"] for r in reqs], [200, 503])  # newest first
        self.assertNotEqual(reqs[1]["fault"], "")
        self.assertEqual(len(self.sim.journal.requests(api_key=self.key, status="5xx")), 1)
        self.assertEqual(len(self.sim.journal.requests(api_key=self.key, limit=1)), 1)
        self.assertEqual(self.sim.journal.requests(path="/_sim/requests"), [])  # its own calls are not recorded
        mine = self.sim.journal.requests(path="/_sim/faults")
        self.assertEqual(mine[0]["headers"]["User-Agent"], dubsim_control.USER_AGENT)

        ok = self.sim.journal.verify(method="POST", path="/api/v1/projects", api_key=self.key, count=2)
        self.assertTrue(ok["ok"], ok)
        self.assertEqual(ok["matched"], 2)
        missed = self.sim.journal.verify(
            method="POST", path="/api/v1/projects", api_key=self.key, headers={"Idempotency-Key": "k-1"}
        )
        self.assertFalse(missed["ok"])
        self.assertEqual(len(missed["near_misses"]), 2)

        report = self.sim.journal.report(self.key)
        self.assertEqual(report["api_key"], self.key)
        self.assertEqual(report["summary"]["requests"], 2)
        rules = [f["rule"] for f in report["findings"]]
        self.assertIn("post-without-idempotency-key", rules)
        text = self.sim.journal.report(self.key, text=True)
        self.assertIsInstance(text, str)
        self.assertIn(self.key, text)
        self.assertIn("post-without-idempotency-key", text)
        self.assertTrue(pid)

    def test_accounts(self) -> None:
        acct = self.sim.accounts.create(plan="enterprise", balance_minutes=50, retranslation_enabled=True, user_email="qa@example.test")
        self.assertTrue(acct["api_key"].startswith("dsk_"))
        self.assertEqual((acct["plan"], acct["balance_minutes"], acct["user_email"]), ("enterprise", 50, "qa@example.test"))
        key = acct["api_key"]
        updated = self.sim.accounts.update(key, rate_limit={"per_minute": 5, "per_day": 100})
        self.assertEqual(updated["rate_limit"], {"per_minute": 5, "per_day": 100})
        self.assertIsNone(updated["storage"])
        cleared = self.sim.accounts.update(key, rate_limit=None)
        self.assertIsNone(cleared["rate_limit"])

        create_project(key)
        self.assertEqual(self.sim.state(api_key=key)["accounts"][0]["balance_minutes"], 49)
        self.sim.accounts.reset(key)
        st = self.sim.state(api_key=key)
        self.assertEqual(st["accounts"][0]["balance_minutes"], 50)
        self.assertEqual(st["projects"], [])

    def test_state_pages(self) -> None:
        ids = [create_project(self.key) for _ in range(3)]
        first = self.sim.state(api_key=self.key, limit=2)
        self.assertTrue(first["truncated"])
        self.assertEqual(len(first["projects"]), 2)
        rest = self.sim.state(api_key=self.key, limit=2, cursor=first["next_cursor"])
        self.assertEqual(len(rest["projects"]), 1)
        self.assertNotIn("next_cursor", rest)
        seen = [p["id"] for p in self.sim.projects(api_key=self.key, page_size=1)]
        self.assertEqual(sorted(seen), sorted(ids))

    def test_load_fixtures(self) -> None:
        key = "team-py-" + self.key[-8:]
        loaded = self.sim.load_fixtures({"accounts": [{"api_key": key, "plan": "pro", "balance_minutes": 40}]})
        self.assertGreaterEqual(loaded["accounts"], 1)
        create_project(key)
        self.assertEqual(self.sim.state(api_key=key)["accounts"][0]["balance_minutes"], 39)

    def test_reset(self) -> None:
        create_project(self.key)
        self.sim.outcomes.add_rule("error", api_key=self.key)
        self.sim.reset()
        st = self.sim.state()
        self.assertNotIn(self.key, [a["api_key"] for a in st["accounts"]])
        self.assertTrue(st["accounts"])  # the fixture accounts, and only them
        self.assertTrue(all(a.get("fixture") for a in st["accounts"]), st["accounts"])
        self.assertEqual(st["projects"], [])
        self.assertEqual(self.sim.outcomes.rules(), [])
        status, _ = platform("GET", "/api/v1/projects", self.key)
        self.assertNotEqual(status, 200)

    def test_errors(self) -> None:
        with self.assertRaises(DubsimError) as cm:
            self.sim.outcomes.force_project("999999999", "ready")
        e = cm.exception
        self.assertEqual((e.method, e.path, e.status, e.error), ("POST", "/_sim/projects/999999999/outcome", 404, "NotFoundError"))
        self.assertEqual(e.message, "Project not found")
        self.assertIn('"NotFoundError"', e.body)
        self.assertIn("404 NotFoundError", str(e))
        with self.assertRaises(DubsimError) as cm:
            self.sim.faults.add(path="/x", action={"type": "no-such-action"})
        self.assertEqual((cm.exception.status, cm.exception.error), (400, "ValidationError"))
        with self.assertRaises(DubsimError) as cm:
            self.sim.outcomes.set_video_status("000000000000000000000000", "completed")
        self.assertEqual(cm.exception.status, 404)
        with self.assertRaises(DubsimError) as cm:
            self.sim.outcomes.force_artifact("000000000000000000000000", "error", now=True)
        self.assertEqual(cm.exception.status, 404)

    def test_control_token(self) -> None:
        token = os.environ.get("DUBSIM_CONTROL_TOKEN", "")
        if not token:
            self.skipTest("dubsim runs without a control token (DUBSIM_CONTROL_TOKEN is empty)")
        self.assertEqual(self.sim.token, token)
        for wrong in ("", token + "-wrong"):
            other = Client(token=wrong)
            self.assertEqual(other.health()["status"], "ok")  # open to all
            with self.assertRaises(DubsimError) as cm:
                other.clock.get()
            self.assertEqual((cm.exception.status, cm.exception.error), (401, "UnauthorizedError"))
        self.assertIn("now", Client(token=token).clock.get())

    def test_interface_urls(self) -> None:
        self.assertEqual(self.sim.platform_url, self.sim.base_url + "/platform")
        self.assertEqual(self.sim.studio_url, self.sim.base_url + "/studio")
        # The docs' minimal studio create: the studio's under studio_url, the platform's
        # (a create without its required fields) under platform_url.
        status, body = api(self.sim.platform_url, "POST", "/api/v1/projects", self.key, {"name": "Marketing"})
        self.assertEqual((status, body), (400, {"error": "ValidationError", "message": "source_lang is required"}))
        status, body = api(self.sim.studio_url, "POST", "/api/v1/projects", self.key, {"name": "Marketing"})
        self.assertEqual(status, 200, body)
        self.assertEqual(body["projectUrl"], self.sim.studio_url + "/projects/" + body["id"])
        with self.sim.sandbox() as sb:
            self.assertEqual(sb.platform_url, sb.base_url + "/platform")
            self.assertEqual(sb.studio_url, sb.base_url + "/studio")
            status, body = api(sb.platform_url, "GET", "/api/v1/balance", sb.key("dubsim-pro"))
            self.assertEqual(status, 200, body)

    def test_sandbox(self) -> None:
        default_now = self.sim.clock.get()["now"]
        start = datetime(2030, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
        with self.sim.sandbox(start=start) as sb:
            self.assertRegex(sb.id, r"^[0-9a-hjkmnp-tv-z]{16}$")
            self.assertEqual(sb.base_url, self.sim.base_url + "/sbx/" + sb.id)
            self.assertEqual(sb.client.base_url, sb.base_url)
            self.assertEqual(sb.client.token, self.sim.token)
            key = sb.key("dubsim-pro")
            self.assertEqual(key, "sbx_%s_dubsim-pro" % sb.id)
            with self.assertRaises(KeyError):
                sb.key("nobody")
            self.assertIn(sb.id, [s["id"] for s in self.sim.sandboxes()])
            ck = sb.client.clock.get()
            self.assertEqual((dubsim_control._parse_time(ck["now"]), ck["frozen"]), (start, True))

            pid = create_project(key)  # by its key, at the shared address
            self.assertEqual(project_status(key, pid)["status"], "in_progress")
            after = sb.client.clock.advance(3600)
            self.assertEqual(dubsim_control._parse_time(after["now"]), start + timedelta(hours=1))
            self.assertEqual(project_status(key, pid)["status"], "ready")
            self.assertEqual(self.sim.clock.get()["now"], default_now, "the default clock stands")

            api = [(r["method"], r["path"], r["api_key"]) for r in sb.client.journal.requests(path="/api/*")]
            self.assertEqual(
                api,
                [
                    ("GET", "/api/v1/projects/" + pid, key),
                    ("GET", "/api/v1/projects/" + pid, key),
                    ("POST", "/api/v1/projects", key),
                ],
            )
            self.assertEqual(self.sim.journal.requests(api_key=key), [], "the default journal has none of them")
        self.assertNotIn(sb.id, [s["id"] for s in self.sim.sandboxes()])
        with self.assertRaises(DubsimError) as cm:
            sb.delete()
        self.assertEqual((cm.exception.status, cm.exception.error), (404, "NotFoundError"))
        sb.delete(missing_ok=True)
        with sb:
            pass  # a sandbox gone already is no error at the end of a block

    def test_sandbox_options(self) -> None:
        with self.sim.sandbox(time_scale=60) as sb:
            ck = sb.client.clock.get()
            self.assertEqual((ck["frozen"], ck["time_scale"]), (False, 60))

        def project(seed: int) -> str:
            with self.sim.sandbox(start="2030-01-01T00:00:00Z", seed=seed) as sb:
                return create_project(sb.key("dubsim-pro"))

        self.assertEqual(project(7), project(7))
        self.assertNotEqual(project(7), project(8))

    def test_sandboxes_in_parallel(self) -> None:
        base = datetime(2030, 1, 1, tzinfo=timezone.utc)

        def one(i: int) -> str:
            start = base + timedelta(days=i)
            with self.sim.sandbox(start=start) as sb:
                key = sb.key("dubsim-pro")
                pid = create_project(key)
                now = sb.client.clock.advance(3600)["now"]
                self.assertEqual(dubsim_control._parse_time(now), start + timedelta(hours=1))
                self.assertEqual(project_status(key, pid)["status"], "ready")
                keys = {r["api_key"] for r in sb.client.journal.requests(path="/api/*")}
                self.assertEqual(keys, {key})
                return sb.id

        with ThreadPoolExecutor(max_workers=8) as pool:
            ids = list(pool.map(one, range(16)))
        self.assertEqual(len(set(ids)), 16)
        self.assertFalse(set(ids) & {s["id"] for s in self.sim.sandboxes()}, "every sandbox deleted")

    def test_sandbox_id(self) -> None:
        ids = {dubsim_control._sandbox_id() for _ in range(1000)}
        self.assertEqual(len(ids), 1000)
        for i in ids:
            self.assertTrue(re.fullmatch(r"[0-9a-hjkmnp-tv-z]{16}", i), i)


if __name__ == "__main__":
    unittest.main()
