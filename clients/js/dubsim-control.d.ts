// Types of dubsim-control.js (written by hand; `npm test` checks them with tsc --strict
// against test/types-check.ts). Names are the control API's JSON names (docs/control-api.md).

export declare const VERSION: string;
export declare const USER_AGENT: string;
export declare const OUTCOME_READY: "ready";
export declare const OUTCOME_ERROR: "error";
/** The path under which dubsim serves the platform interface alone. */
export declare const PLATFORM_PREFIX: "/platform";
/** The path under which dubsim serves the studio interface alone. */
export declare const STUDIO_PREFIX: "/studio";

export type Outcome = "ready" | "error";

/** Any JSON value the control API accepts or returns. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface ClientOptions {
  /** The simulator's address without /_sim; default $DUBSIM_URL or http://localhost:8080. */
  baseUrl?: string;
  /** The control token (--control-token); default $DUBSIM_CONTROL_TOKEN; "" sends none. */
  token?: string;
  /** Bound of each call in milliseconds (default 60000). */
  timeoutMs?: number;
  /** Replaces the global fetch. */
  fetch?: typeof globalThis.fetch;
}

export interface Health {
  status: string;
  version: string;
  now: string;
  uptime_seconds: number;
}

export interface Transition {
  resource: string;
  id: string;
  from: string;
  to: string;
  due_at: string;
}

export interface Clock {
  /** Simulated time, RFC 3339 to the millisecond. */
  now: string;
  time_scale: number;
  /** True whenever time stands still (a freeze, or scale 0). */
  frozen: boolean;
  /** Set by nextDue: the transition it moved to. */
  transition?: Transition;
}

export interface Work {
  kind: "download" | "probe";
  resource: string;
  id: string;
  url: string;
  started_at: string;
  needed_at: string | null;
  waiting_for: string;
  bytes: number;
}

export interface StorageCredentials {
  access_key_id?: string;
  secret_access_key?: string;
  region?: string;
  buckets?: string[];
}

export interface RateLimit {
  per_minute?: number;
  per_day?: number;
}

export interface AccountSpec {
  api_key?: string;
  name?: string;
  plan?: "none" | "subscription" | "pro" | "enterprise";
  balance_minutes?: number;
  retranslation_enabled?: boolean;
  cloning_enabled?: boolean;
  company_id?: string;
  user_email?: string;
  storage?: StorageCredentials;
  rate_limit?: RateLimit;
}

export interface Account {
  api_key: string;
  name: string;
  plan: string;
  balance_minutes: number;
  retranslation_enabled: boolean;
  cloning_enabled: boolean;
  created_at: string;
  company_id: string;
  user_id: string;
  user_email: string;
  storage: StorageCredentials | null;
  rate_limit: RateLimit | null;
}

/** A field left out stays as it is; null removes the setting. */
export interface AccountPatch {
  storage?: StorageCredentials | null;
  rate_limit?: RateLimit | null;
}

export interface ProjectOutcome {
  outcome: Outcome;
  error_message?: string;
  /** End the processing at once instead of at its due time. */
  now?: boolean;
}

export interface ArtifactOutcome extends ProjectOutcome {
  size?: number;
  duration_seconds?: number;
}

export interface Forced {
  project_id?: string;
  artifact_id?: string;
  status: string;
  due_at?: string;
  planned_outcome?: string;
  error_message?: string;
}

export interface VideoStatus {
  video_id: string;
  status: string;
  next_transition_at?: string;
}

export interface OutcomeRuleSpec {
  outcome: Outcome;
  api_key?: string;
  source_url_pattern?: string;
  /** How many creations it applies to; default 1. */
  count?: number;
  error_message?: string;
  resource?: "project" | "artifact";
}

export interface OutcomeRule {
  id: string;
  api_key?: string;
  source_url_pattern?: string;
  remaining: number;
  outcome: Outcome;
  error_message?: string;
  resource?: string;
  created_at: string;
}

export type FaultAction =
  | { type: "latency"; latency_ms: number }
  | { type: "latency"; distribution: "uniform"; min_ms: number; max_ms: number }
  | { type: "latency"; distribution: "normal"; mean_ms: number; stddev_ms: number }
  | { type: "latency"; distribution: "lognormal"; median_ms: number; sigma: number }
  | { type: "error"; status: number; error?: string; message?: string }
  | { type: "rate_limit"; retry_after_seconds?: number; error?: string; message?: string }
  | { type: "drop" }
  | { type: "truncate"; bytes: number };

export interface FaultRule {
  id?: string;
  method?: string;
  /** A glob over the URL path; * matches any run of characters. */
  path?: string;
  api_key?: string;
  /** Fire at most this many times; 0 or absent: unlimited. */
  count?: number;
  probability?: number;
  ttl_seconds?: number;
  action: FaultAction;
}

export interface Fault extends FaultRule {
  id: string;
  remaining: number | null;
  hits: number;
  expires_at: string | null;
  state: "active" | "spent" | "expired";
}

export interface RequestFilter {
  method?: string;
  /** Exact, or a glob where * matches any run of characters. */
  path?: string;
  /** A code ("404", 0 for aborted) or a class ("4xx"). */
  status?: string | number;
  api_key?: string;
  /** Only entries with a greater sequence id. */
  since?: number;
  /** The newest N. */
  limit?: number;
}

export interface JournalRequest {
  seq: number;
  time: string;
  sim_time: string;
  duration_ms: number;
  interface: "platform" | "studio" | "control";
  routed_by: string;
  method: string;
  path: string;
  query: string;
  api_key: string;
  headers: Record<string, string>;
  request_body: string;
  request_body_size: number;
  request_body_truncated: boolean;
  status: number;
  response_body: string;
  response_body_truncated: boolean;
  response_bytes: number;
  aborted: boolean;
  truncated: boolean;
  fault: string;
  notes: Record<string, string> | null;
}

export interface Matcher {
  method?: string;
  path?: string;
  api_key?: string;
  status?: string | number;
  body_contains?: string;
  /** Exact values; "" means absent. */
  headers?: Record<string, string>;
  count?: number;
  at_least?: number;
  at_most?: number;
}

export interface VerifyResult {
  matched: number;
  ok: boolean;
  expected: string;
  near_misses: { entry: JournalRequest; reason: string }[];
  warning?: string;
}

export interface Finding {
  rule: string;
  severity: "error" | "warning";
  title: string;
  detail: string;
  observed: string;
  count: number;
  examples: { seq: number; time: string; sim_time?: string; method: string; path: string; [key: string]: Json | undefined }[];
}

export interface Report {
  api_key: string;
  generated_at: string;
  summary: {
    requests: number;
    first_seq?: number;
    last_seq?: number;
    by_endpoint: Record<string, number>;
    by_status_class: Record<string, number>;
    findings: number;
    errors: number;
    warnings: number;
    journal_dropped: number;
  };
  findings: Finding[];
}

export interface ProjectState {
  id: string;
  api_key: string;
  status: string;
  source_video_url: string;
  created_at: string;
  due_at?: string;
  planned_outcome?: string;
  history: { [key: string]: Json }[];
  [key: string]: Json | undefined;
}

export interface State {
  now: string;
  time_scale: number;
  frozen: boolean;
  accounts: (Account & { initial_balance_minutes: number; fixture?: boolean })[];
  projects: ProjectState[];
  pending_transitions: { [key: string]: Json }[];
  outcome_rules: OutcomeRule[];
  idempotency_keys: number;
  fixtures: Record<string, number>;
  studio: Record<string, number>;
  truncated?: boolean;
  next_cursor?: string;
  accounts_total?: number;
  pending_transitions_total?: number;
}

export interface StateQuery {
  api_key?: string;
  limit?: number;
  cursor?: string;
}

export interface Fixtures {
  accounts?: { [key: string]: Json }[];
  options?: { [key: string]: Json };
  voices?: { [key: string]: Json };
  media_rules?: { [key: string]: Json }[];
  studio?: { [key: string]: Json };
}

/** An answer of the control API other than 2xx. */
export declare class DubsimError extends Error {
  readonly name: "DubsimError";
  readonly method: string;
  readonly path: string;
  /** The HTTP status. */
  readonly status: number;
  /** The envelope's error name ("NotFoundError"); "" for an answer not in the envelope. */
  readonly error: string;
  /** The envelope's message, or the body cut to 1 KiB. */
  readonly apiMessage: string;
  /** The answer's text. */
  readonly body: string;
  constructor(method: string, path: string, status: number, body: string);
}

export declare class DubsimClient {
  constructor(options?: ClientOptions);
  readonly baseUrl: string;
  /** baseUrl plus /platform: the platform interface alone. */
  readonly platformUrl: string;
  /** baseUrl plus /studio: the studio interface alone. */
  readonly studioUrl: string;
  readonly token: string;
  readonly timeoutMs: number;
  readonly clock: ClockAPI;
  readonly accounts: AccountsAPI;
  readonly outcomes: OutcomesAPI;
  readonly faults: FaultsAPI;
  readonly journal: JournalAPI;

  /** Sends one control call; body, unless undefined, as JSON. */
  call(method: string, path: string, body?: unknown, options?: { text?: false }): Promise<any>;
  call(method: string, path: string, body: unknown, options: { text: true }): Promise<string>;
  health(): Promise<Health>;
  work(): Promise<Work[]>;
  reset(): Promise<void>;
  state(query?: StateQuery): Promise<State>;
  projects(options?: { api_key?: string; page_size?: number }): AsyncGenerator<ProjectState, void, undefined>;
  loadFixtures(fixtures: Fixtures): Promise<Record<string, number>>;
  /** Creates a sandbox with an id made here (PUT /_sim/sandboxes/{id}). */
  sandbox(spec?: SandboxSpec): Promise<Sandbox>;
  /** GET /_sim/sandboxes: oldest first. */
  sandboxes(): Promise<SandboxInfo[]>;
}

export interface SandboxSpec {
  /** Initial simulated time; default the dubsim's now. */
  start?: Date | string;
  /** Speed of the sandbox's clock; 0 (default) freezes it. */
  time_scale?: number;
  /** Seed of its generated ids and content. */
  seed?: number;
}

/** A sandbox as the control API shows it. */
export interface SandboxInfo {
  id: string;
  created_at: string;
  last_used_at: string;
  /** Set when the process expires idle sandboxes (--sandbox-idle). */
  expires_at?: string;
  clock: Clock;
  /** Fixture API key -> the sandbox's key. */
  api_keys: Record<string, string>;
  base_url: string;
  control_url: string;
  dashboard_url: string;
}

export declare class Sandbox {
  private constructor();
  readonly id: string;
  /** The dubsim's address as the client reaches it, plus /sbx/<id>. */
  readonly baseUrl: string;
  /** baseUrl plus /platform: the sandbox's platform interface alone. */
  readonly platformUrl: string;
  /** baseUrl plus /studio: the sandbox's studio interface alone. */
  readonly studioUrl: string;
  readonly controlUrl: string;
  readonly dashboardUrl: string;
  /** Fixture API key ("dubsim-pro") -> the sandbox's key. */
  readonly keys: Record<string, string>;
  /** A client of the sandbox's control API. */
  readonly client: DubsimClient;
  /** The creation's answer. */
  readonly info: SandboxInfo;
  /** The sandbox's key for a fixture key; throws a RangeError if there is none. */
  key(name: string): string;
  /** DELETE /_sim/sandboxes/{id}; with missingOk a 404 resolves. */
  delete(options?: { missingOk?: boolean }): Promise<void>;
}

export declare class ClockAPI {
  private constructor();
  get(): Promise<Clock>;
  advance(seconds: number): Promise<Clock>;
  nextDue(): Promise<Clock & { transition: Transition }>;
  advanceTo(when: Date | string): Promise<Clock>;
  setScale(time_scale: number): Promise<Clock>;
  freeze(): Promise<Clock>;
  resume(): Promise<Clock>;
}

export declare class AccountsAPI {
  private constructor();
  create(spec?: AccountSpec): Promise<Account>;
  update(apiKey: string, patch: AccountPatch): Promise<Account>;
  reset(apiKey: string): Promise<void>;
}

export declare class OutcomesAPI {
  private constructor();
  forceProject(projectId: string, outcome: ProjectOutcome): Promise<Forced>;
  forceArtifact(artifactId: string, outcome: ArtifactOutcome): Promise<Forced>;
  setVideoStatus(videoId: string, status: "new" | "in_progress" | "completed", options?: { auto?: boolean }): Promise<VideoStatus>;
  addRule(spec: OutcomeRuleSpec): Promise<OutcomeRule>;
  rules(): Promise<OutcomeRule[]>;
  removeRule(id: string): Promise<void>;
}

export declare class FaultsAPI {
  private constructor();
  add(rule: FaultRule): Promise<Fault>;
  list(): Promise<Fault[]>;
  remove(id: string): Promise<void>;
  clear(): Promise<number>;
}

export declare class JournalAPI {
  private constructor();
  requests(filter?: RequestFilter): Promise<JournalRequest[]>;
  clear(): Promise<void>;
  verify(matcher: Matcher): Promise<VerifyResult>;
  report(apiKey: string, options?: { text?: false }): Promise<Report>;
  report(apiKey: string, options: { text: true }): Promise<string>;
}
