-- wrk script of POST /api/v1/projects: the Create Project request of the
-- provider's documentation (a 10-minute video, soundalike voices). The
-- Authorization header comes from the command line (-H), for an account
-- whose balance lasts the whole run.
--   wrk -t2 -c64 -d10s --latency -H 'Authorization: Bearer KEY' -s post.lua URL/api/v1/projects
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"name":"My Project","source_lang":"en","target_lang":"fr-FR",'
  .. '"source_video_url":"https://example.com/video.mp4","use_soundalike_voices":true}'
