-- wrk script of the studio's POST /api/v1/artifacts/create: an artifact from
-- a public URL (the studio's direct_url upload method). dubsim creates the
-- artifact (status created) and never contacts the host; with --time-scale 0
-- its processing does not start during the run. The Authorization header
-- comes from the command line (-H), a studio key.
--   wrk -t2 -c64 -d10s --latency -H 'Authorization: Bearer KEY' -s artifact.lua URL/api/v1/artifacts/create
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"name":"Teaser","type":"video","url":"https://example.com/video.mp4"}'
