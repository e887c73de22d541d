// A request the documents refuse: generators_test.go expects tsc --strict to
// fail on it, so a check that lets anything through cannot pass unnoticed.
import type { paths as Platform } from "./gen/platform";

type CreateBody = NonNullable<Platform["/api/v1/projects"]["post"]["requestBody"]>["content"]["application/json"];

export const missingTarget: CreateBody = { source_lang: "en", source_video_url: "https://example.com/video.mp4" };
