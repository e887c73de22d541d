// The README's walkthrough requests (platform, control clock, re-translation,
// studio), typed with what openapi-typescript generates from the documents a
// running dubsim serves (./gen/*.ts, written by generators_test.go). tsc
// --strict checks every body sent and every field read against the
// documents; node then runs it against that dubsim (process.argv[2]).
import type { paths as Platform } from "./gen/platform";
import type { paths as Studio } from "./gen/studio";
import type { paths as Control } from "./gen/control";
import type { paths as Merged } from "./gen/openapi";

declare const process: { argv: string[]; exitCode?: number };

type JSONOf<R> = R extends { content: { "application/json": infer B } } ? B : never;
type Body<Op> = Op extends { requestBody?: infer R } ? JSONOf<NonNullable<R>> : never;
type Answer<Op, S extends number> = Op extends { responses: { [K in S]: infer R } } ? JSONOf<R> : never;

type CreateProject = Platform["/api/v1/projects"]["post"];
type GetProject = Platform["/api/v1/projects/{project_id}"]["get"];
type Validate = Platform["/api/v1/projects/{project_id}/validate-translation-request"]["post"];
type Retranslate = Platform["/api/v1/projects/{project_id}/translations"]["post"];
type DeleteProject = Platform["/api/v1/projects/{project_id}"]["delete"];
type Advance = Control["/_sim/clock/advance"]["post"];
type StudioList = Studio["/api/v1/projects"]["get"];
type PresignedURL = Studio["/api/v1/artifacts/create"]["get"];
type StudioCreate = Studio["/api/v1/projects"]["post"];
type Clock = Merged["/_sim/clock"]["get"];

const base = process.argv[2] ?? "http://localhost:8080";

async function call<T>(method: string, path: string, key: string | null, body?: unknown, want = 200): Promise<T> {
  const headers: Record<string, string> = {};
  if (key !== null) headers["Authorization"] = `Bearer ${key}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (res.status !== want) throw new Error(`${method} ${path}: ${res.status}, want ${want}: ${text}`);
  return JSON.parse(text) as T;
}

// head is the first n bytes of a response's body; the rest is not read
// (the dubbed audio of the docs' 10-minute video is 26 MB, and only its
// RIFF magic is checked).
async function head(res: Response, n: number): Promise<Uint8Array> {
  const got: number[] = [];
  const reader = res.body?.getReader();
  while (reader !== undefined && got.length < n) {
    const { done, value } = await reader.read();
    if (done) break;
    got.push(...value.subarray(0, n - got.length));
  }
  await reader?.cancel();
  return Uint8Array.from(got);
}

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(what);
}

async function advance(seconds: number): Promise<Answer<Advance, 200>> {
  const body: Body<Advance> = { seconds };
  return call<Answer<Advance, 200>>("POST", "/_sim/clock/advance", null, body);
}

async function main(): Promise<void> {
  // create (the docs' example request)
  const K = "dubsim-subscription";
  const create: Body<CreateProject> = {
    name: "My Project", source_lang: "en", target_lang: "fr-FR",
    source_video_url: "https://example.com/video.mp4", use_soundalike_voices: true,
  };
  const created = await call<Answer<CreateProject, 200>>("POST", "/api/v1/projects", K, create);
  check(created.cost_minutes === 10, `cost_minutes ${created.cost_minutes}`);
  const id: string = created.project_id;

  let project = await call<Answer<GetProject, 200>>("GET", `/api/v1/projects/${id}`, K);
  check(project.status === "in_progress", `status ${project.status}`);
  const clock = await advance(600);
  check(typeof clock.now === "string", "clock.now");
  project = await call<Answer<GetProject, 200>>("GET", `/api/v1/projects/${id}`, K);
  if (project.status !== "ready") throw new Error(`status ${project.status} after 600 s`);
  // Narrowed by the discriminator: only a ready project has outputs.
  const audio = await fetch(project.output_tts_audio_url);
  const riff = new TextDecoder().decode(await head(audio, 4));
  check(audio.status === 200 && riff === "RIFF", `output ${audio.status} ${riff}`);

  // re-translate (needs an account with re-translation enabled)
  const E = "dubsim-enterprise";
  const second = await call<Answer<CreateProject, 200>>("POST", "/api/v1/projects", E,
    { source_lang: "en", target_lang: "fr-FR", source_video_url: "https://example.com/video.mp4" } satisfies Body<CreateProject>);
  await advance(600);
  const body: Body<Retranslate> = {
    target_script: [{ start_ms: 100, end_ms: 1544, text: "Au revoir le monde!", speaker_id: 1 }],
    target_speakers: [{ speaker_id: 1, voice_key: "f4fb50:fr-FR-AlainNeural", style: "masculine" }],
  };
  const valid = await call<Answer<Validate, 200>>("POST", `/api/v1/projects/${second.project_id}/validate-translation-request`, E, body);
  check(valid.valid === true, `valid ${JSON.stringify(valid)}`);
  const again = await call<Answer<Retranslate, 200>>("POST", `/api/v1/projects/${second.project_id}/translations`, E, body);
  check(again.translations_count === 1, `translations_count ${again.translations_count}`);
  await advance(600);
  const deleted = await call<Answer<DeleteProject, 200>>("DELETE", `/api/v1/projects/${second.project_id}`, E);
  check(deleted.success === true, "deleted");

  // studio interface
  const S = "dubsim-free";
  const list = await call<Answer<StudioList, 200>>("GET", "/api/v1/projects", S);
  check(Array.isArray(list), "studio list");
  const upload = await call<Answer<PresignedURL, 200>>("GET", "/api/v1/artifacts/create?fileName=clip.wav", S);
  check(upload.s3Path.endsWith("/clip.wav"), `s3Path ${upload.s3Path}`);
  const launch: Body<StudioCreate> = { name: "Launch", managerEmail: "bob.martinez@acme-media.example" };
  const studio = await call<Answer<StudioCreate, 200>>("POST", "/api/v1/projects", S, launch);
  check(studio.name === "Launch", `studio name ${studio.name}`);

  // the merged document's types work as well
  const now = await call<Answer<Clock, 200>>("GET", "/_sim/clock", null);
  check(now.now === clock.now || now.now > clock.now, `clock ${now.now}`);
  console.log(JSON.stringify({ platform: id, retranslated: second.project_id, studio: studio.id, ok: true }));
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
