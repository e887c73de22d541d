package store

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/dubsim/dubsim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ptr[T any](v T) *T { return &v }

func company(id string) sim.Company {
	return sim.Company{ID: id, Name: "Company " + id, MultiLanguage: true, Fixture: true, CreatedAt: t0}
}

func user(id, companyID, email string) sim.User {
	return sim.User{ID: id, CompanyID: companyID, Name: "User " + id, Email: email, CreatedAt: t0}
}

func studioProject(id, companyID string) sim.StudioProject {
	return sim.StudioProject{
		ID: id, CompanyID: companyID, Name: "Studio project " + id, Status: sim.StudioProjectStatusNew,
		ManagerID: "u1", TranslationGlossary: "g1", Remark: "remark", FolderID: "f1",
		CreatedAt: t0, UpdatedAt: t0.Add(time.Second),
	}
}

func video(id, projectID string, due time.Time) sim.Video {
	return sim.Video{
		ID: id, ProjectID: projectID, CompanyID: "c1", Name: "Video " + id, Status: sim.VideoInProgress,
		ProcessingType: "dubbing", SrcLang: "en", DstLangs: []string{"fr", "de"}, SourceArtifactID: "a1",
		DurationSeconds: ptr(61.5), Remark: ptr(""),
		StringVariables: []sim.StringVariable{{Key: "k", Value: "v"}},
		Guidance:        &sim.Guidance{Common: ptr("be brief"), ByLang: map[string]string{"fr": "tu"}},
		Pipeline:        &sim.PipelineOptions{ShouldAutomateTranslation: ptr(false)},
		DueAt:           due, CreatedAt: t0, UpdatedAt: t0,
	}
}

func artifact(id string, due time.Time) sim.Artifact {
	return sim.Artifact{
		ID: id, CompanyID: "c1", CreatedBy: "u1", APIKey: "k", Name: "clip.mp4", Type: sim.ArtifactVideo,
		Status: sim.ArtifactStarted, UploadMethod: sim.UploadFragments, SourceKind: sim.SourceFragments,
		Fragments: []sim.Fragment{{URL: "https://example.com/a.mp4", StartTime: 0}, {S3Path: "s3://b/p.mp4", StartTime: 12.5}},
		S3Path:    "uploads/" + id + "/clip.mp4", S3Bucket: sim.ArtifactBucket, Size: ptr(int64(1 << 20)),
		Result: sim.ArtifactResult{Known: true, Size: 1 << 20, Duration: ptr(30.0), Origin: "rule",
			Media: []sim.MediaFormat{{VideoCodec: "h264", Width: 640, Height: 360, FrameRate: 29970}, {}}},
		StartAt: t0.Add(2 * time.Second), DoneAt: t0.Add(time.Minute), DueAt: due, CreatedAt: t0, UpdatedAt: t0,
	}
}

func upload(id string) sim.Upload {
	return sim.Upload{
		ID: id, APIKey: "k", CompanyID: "c1", FileName: "clip.wav", S3Path: "s3://" + sim.UploadBucket + "/temp/" + id + "/clip.wav",
		ExpiresAt: t0.Add(sim.UploadValidity), CreatedAt: t0,
		Uploaded: true, UploadedAt: t0.Add(time.Minute), Size: 4096, Duration: ptr(1.5), Format: "wav", Blob: "b1",
		Media: sim.MediaFormat{AudioCodec: "pcm_s16le", SampleRate: 44100, Channels: 2},
	}
}

// Upload and artifact records written before dubsim kept media formats
// read with none; the formats are omitted from the JSON when unknown.
func TestStudioRecordsWithoutMediaFormat(t *testing.T) {
	t.Parallel()
	contract(t, func(t *testing.T, open opener) {
		s := open(t)
		old := upload("old")
		old.Media = sim.MediaFormat{}
		oldArt := artifact("a-old", time.Time{})
		oldArt.Result.Media = nil
		for _, rec := range []struct {
			bucket []byte
			id     string
			v      any
		}{{bUploads, old.ID, old}, {bArtifacts, oldArt.ID, oldArt}} {
			raw, err := encode(rec.v)
			require.NoError(t, err)
			assert.NotContains(t, string(raw), `"media"`)
			require.NoError(t, s.kv.update(func(tx kvTx) error { return tx.put(rec.bucket, []byte(rec.id), raw) }))
		}
		require.NoError(t, s.View(context.Background(), func(tx sim.Tx) error {
			u, err := tx.Uploads().Get("old")
			require.NoError(t, err)
			assert.Equal(t, old, u)
			a, err := tx.Artifacts().Get("a-old")
			require.NoError(t, err)
			assert.Nil(t, a.Result.Media)
			return nil
		}))
	})
}

// putStudio stores one record of every studio type, built by the helpers
// above (the video and the artifact are due).
func putStudio(tx sim.Tx) error {
	return errors.Join(
		tx.Companies().Put(company("c1")),
		tx.Users().Put(user("u1", "c1", "Ann@Example.com")),
		tx.Glossaries().Put(sim.Glossary{ID: "g1", CompanyID: "c1", Kind: sim.GlossaryTranslation, Name: "G", Langs: []string{"en", "fr"}}),
		tx.Folders().Put(sim.Folder{ID: "f1", CompanyID: "c1", Name: "F", ParentID: "f0"}),
		tx.StudioProjects().Put(studioProject("sp1", "c1")),
		tx.Videos().Put(video("v1", "sp1", t0.Add(time.Minute))),
		tx.Artifacts().Put(artifact("a1", t0.Add(time.Second))),
		tx.Uploads().Put(upload("up1")),
	)
}

// studioProjectIDs lists the ids ForEachStudioProject visits for companyID.
func studioProjectIDs(t *testing.T, s *Store, companyID string) []string {
	t.Helper()
	var ids []string
	view(t, s, func(tx sim.Tx) error {
		return tx.ForEachStudioProject(companyID, func(p sim.StudioProject) error {
			if companyID != "" {
				assert.Equal(t, companyID, p.CompanyID, "project %s", p.ID)
			}
			ids = append(ids, p.ID)
			return nil
		})
	})
	return ids
}

// videoIDs lists the ids ForEachVideo visits for projectID.
func videoIDs(t *testing.T, s *Store, projectID string) []string {
	t.Helper()
	var ids []string
	view(t, s, func(tx sim.Tx) error {
		return tx.ForEachVideo(projectID, func(v sim.Video) error {
			if projectID != "" {
				assert.Equal(t, projectID, v.ProjectID, "video %s", v.ID)
			}
			ids = append(ids, v.ID)
			return nil
		})
	})
	return ids
}

func TestStudioRoundTrips(t *testing.T) {
	t.Parallel()
	contract(t, func(t *testing.T, open opener) {
		gloss := sim.Glossary{ID: "g1", CompanyID: "c1", Kind: sim.GlossaryVoices, Name: "Voices", Langs: []string{"en"}, Fixture: true}
		fold := sim.Folder{ID: "f1", CompanyID: "c1", Name: "Folder", ParentID: "f0"}
		cases := []struct {
			name string
			want any
			put  func(sim.Tx) error
			// get reads the record back by id; all lists every record.
			get func(sim.Tx) (any, error)
			all func(sim.Tx, func(any)) error
		}{
			{
				name: "company", want: company("c1"),
				put: func(tx sim.Tx) error { return tx.Companies().Put(company("c1")) },
				get: func(tx sim.Tx) (any, error) { return tx.Companies().Get("c1") },
				all: func(tx sim.Tx, f func(any)) error {
					return tx.Companies().ForEach(func(v sim.Company) error { f(v); return nil })
				},
			},
			{
				name: "user", want: user("u1", "c1", "ann@example.com"),
				put: func(tx sim.Tx) error { return tx.Users().Put(user("u1", "c1", "ann@example.com")) },
				get: func(tx sim.Tx) (any, error) { return tx.Users().Get("u1") },
				all: func(tx sim.Tx, f func(any)) error {
					return tx.Users().ForEach(func(v sim.User) error { f(v); return nil })
				},
			},
			{
				name: "user by email", want: user("u1", "c1", "ann@example.com"),
				put: func(tx sim.Tx) error { return tx.Users().Put(user("u1", "c1", "ann@example.com")) },
				get: func(tx sim.Tx) (any, error) { return tx.UserByEmail("ann@example.com") },
				all: func(tx sim.Tx, f func(any)) error {
					return tx.Users().ForEach(func(v sim.User) error { f(v); return nil })
				},
			},
			{
				name: "glossary", want: gloss,
				put: func(tx sim.Tx) error { return tx.Glossaries().Put(gloss) },
				get: func(tx sim.Tx) (any, error) { return tx.Glossaries().Get("g1") },
				all: func(tx sim.Tx, f func(any)) error {
					return tx.Glossaries().ForEach(func(v sim.Glossary) error { f(v); return nil })
				},
			},
			{
				name: "folder", want: fold,
				put: func(tx sim.Tx) error { return tx.Folders().Put(fold) },
				get: func(tx sim.Tx) (any, error) { return tx.Folders().Get("f1") },
				all: func(tx sim.Tx, f func(any)) error {
					return tx.Folders().ForEach(func(v sim.Folder) error { f(v); return nil })
				},
			},
			{
				name: "studio project", want: studioProject("sp1", "c1"),
				put: func(tx sim.Tx) error { return tx.StudioProjects().Put(studioProject("sp1", "c1")) },
				get: func(tx sim.Tx) (any, error) { return tx.StudioProjects().Get("sp1") },
				all: func(tx sim.Tx, f func(any)) error {
					return tx.ForEachStudioProject("c1", func(v sim.StudioProject) error { f(v); return nil })
				},
			},
			{
				name: "video", want: video("v1", "sp1", t0.Add(time.Minute)),
				put: func(tx sim.Tx) error { return tx.Videos().Put(video("v1", "sp1", t0.Add(time.Minute))) },
				get: func(tx sim.Tx) (any, error) { return tx.Videos().Get("v1") },
				all: func(tx sim.Tx, f func(any)) error {
					return tx.ForEachVideo("sp1", func(v sim.Video) error { f(v); return nil })
				},
			},
			{
				name: "video without due time or options", want: sim.Video{ID: "v2", ProjectID: "sp1", CreatedAt: t0, UpdatedAt: t0},
				put: func(tx sim.Tx) error {
					return tx.Videos().Put(sim.Video{ID: "v2", ProjectID: "sp1", CreatedAt: t0, UpdatedAt: t0})
				},
				get: func(tx sim.Tx) (any, error) { return tx.Videos().Get("v2") },
				all: func(tx sim.Tx, f func(any)) error {
					return tx.ForEachVideo("", func(v sim.Video) error { f(v); return nil })
				},
			},
			{
				name: "artifact", want: artifact("a1", t0.Add(time.Second)),
				put: func(tx sim.Tx) error { return tx.Artifacts().Put(artifact("a1", t0.Add(time.Second))) },
				get: func(tx sim.Tx) (any, error) { return tx.Artifacts().Get("a1") },
				all: func(tx sim.Tx, f func(any)) error {
					return tx.Artifacts().ForEach(func(v sim.Artifact) error { f(v); return nil })
				},
			},
			{
				name: "upload", want: upload("up1"),
				put: func(tx sim.Tx) error { return tx.Uploads().Put(upload("up1")) },
				get: func(tx sim.Tx) (any, error) { return tx.Uploads().Get("up1") },
				all: func(tx sim.Tx, f func(any)) error {
					return tx.Uploads().ForEach(func(v sim.Upload) error { f(v); return nil })
				},
			},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				s := open(t)
				update(t, s, tc.put)
				view(t, s, func(tx sim.Tx) error {
					got, err := tc.get(tx)
					require.NoError(t, err)
					assert.Equal(t, tc.want, got)
					var all []any
					require.NoError(t, tc.all(tx, func(v any) { all = append(all, v) }))
					assert.Equal(t, []any{tc.want}, all)
					return nil
				})
				// A second put of the same record overwrites it in place.
				update(t, s, tc.put)
				view(t, s, func(tx sim.Tx) error {
					n := 0
					require.NoError(t, tc.all(tx, func(any) { n++ }))
					assert.Equal(t, 1, n)
					return nil
				})
			})
		}
	})
}

func TestStudioGettersReturnErrNotFound(t *testing.T) {
	t.Parallel()
	contract(t, func(t *testing.T, open opener) {
		s := open(t)
		// Other records exist, so a lookup cannot succeed by accident.
		update(t, s, putStudio)
		cases := []struct {
			name string
			get  func(sim.Tx) error
		}{
			{"company", func(tx sim.Tx) error { _, err := tx.Companies().Get("c2"); return err }},
			{"user", func(tx sim.Tx) error { _, err := tx.Users().Get("u2"); return err }},
			{"user by email", func(tx sim.Tx) error { _, err := tx.UserByEmail("bob@example.com"); return err }},
			{"user by empty email", func(tx sim.Tx) error { _, err := tx.UserByEmail(""); return err }},
			{"user by email prefix", func(tx sim.Tx) error { _, err := tx.UserByEmail("ann@example"); return err }},
			{"user by id as email", func(tx sim.Tx) error { _, err := tx.UserByEmail("u1"); return err }},
			{"glossary", func(tx sim.Tx) error { _, err := tx.Glossaries().Get("g2"); return err }},
			{"folder", func(tx sim.Tx) error { _, err := tx.Folders().Get("f2"); return err }},
			{"studio project", func(tx sim.Tx) error { _, err := tx.StudioProjects().Get("sp2"); return err }},
			{"studio project with a company id", func(tx sim.Tx) error { _, err := tx.StudioProjects().Get("c1"); return err }},
			{"video", func(tx sim.Tx) error { _, err := tx.Videos().Get("v2"); return err }},
			{"artifact", func(tx sim.Tx) error { _, err := tx.Artifacts().Get("a2"); return err }},
			{"upload", func(tx sim.Tx) error { _, err := tx.Uploads().Get("up2"); return err }},
			{"upload with empty id", func(tx sim.Tx) error { _, err := tx.Uploads().Get(""); return err }},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				err := s.Update(context.Background(), tc.get)
				assert.ErrorIs(t, err, sim.ErrNotFound)
			})
		}
	})
}

func TestStudioPutRequiresID(t *testing.T) {
	t.Parallel()
	contract(t, func(t *testing.T, open opener) {
		cases := []struct {
			name    string
			put     func(sim.Tx) error
			buckets [][]byte // stay empty
		}{
			{"company", func(tx sim.Tx) error { return tx.Companies().Put(company("")) }, [][]byte{bCompanies}},
			{"user", func(tx sim.Tx) error { return tx.Users().Put(user("", "c1", "a@b.c")) }, [][]byte{bUsers, bUsersByEmail}},
			{"glossary", func(tx sim.Tx) error { return tx.Glossaries().Put(sim.Glossary{Name: "x"}) }, [][]byte{bGlossaries}},
			{"folder", func(tx sim.Tx) error { return tx.Folders().Put(sim.Folder{Name: "x"}) }, [][]byte{bFolders}},
			{"studio project", func(tx sim.Tx) error { return tx.StudioProjects().Put(studioProject("", "c1")) }, [][]byte{bStudioProjects, bStudioProjectsCo}},
			{"video", func(tx sim.Tx) error { return tx.Videos().Put(video("", "sp1", t0)) }, [][]byte{bVideos, bVideosByProject, bVideosDue}},
			{"artifact", func(tx sim.Tx) error { return tx.Artifacts().Put(artifact("", t0)) }, [][]byte{bArtifacts, bArtifactsDue}},
			{"upload", func(tx sim.Tx) error { return tx.Uploads().Put(upload("")) }, [][]byte{bUploads}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				s := open(t)
				// The transaction goes on after the error: the put wrote nothing.
				update(t, s, func(tx sim.Tx) error {
					err := tc.put(tx)
					require.Error(t, err)
					assert.Contains(t, err.Error(), "without id")
					return nil
				})
				for _, b := range tc.buckets {
					assert.Zero(t, count(t, s, b), "bucket %s", b)
				}
			})
		}
	})
}

func TestForEachStudioProjectByCompany(t *testing.T) {
	t.Parallel()
	contract(t, func(t *testing.T, open opener) {
		s := open(t)
		update(t, s, func(tx sim.Tx) error {
			for _, p := range []sim.StudioProject{
				studioProject("p3", "c1"),
				studioProject("p1", "c1"),
				studioProject("p2", "c2"),
				studioProject("p4", "c1"),
				// Ids that a naive concatenation of company and project would confuse.
				studioProject("bc", "a"),
				studioProject("c", "ab"),
				studioProject("c1x", "c"),
				studioProject("orphan", ""),
			} {
				if err := tx.StudioProjects().Put(p); err != nil {
					return err
				}
			}
			return nil
		})
		cases := []struct {
			name      string
			companyID string
			want      []string
		}{
			{"one company, in id order", "c1", []string{"p1", "p3", "p4"}},
			{"another company", "c2", []string{"p2"}},
			{"company a is not a prefix of ab", "a", []string{"bc"}},
			{"company ab", "ab", []string{"c"}},
			{"company c is not a prefix of c1", "c", []string{"c1x"}},
			{"unknown company", "c9", nil},
			{"company ids are case-sensitive", "C1", nil},
			{"every company", "", []string{"bc", "c", "c1x", "orphan", "p1", "p2", "p3", "p4"}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				assert.Equal(t, tc.want, studioProjectIDs(t, s, tc.companyID))
			})
		}
	})
}

func TestStudioProjectIndexFollowsPuts(t *testing.T) {
	t.Parallel()
	contract(t, func(t *testing.T, open opener) {
		cases := []struct {
			name string
			// change is applied to "a" (company c1); "b" (c1) and "c" (c2) are
			// untouched.
			change func(tx sim.Tx, a sim.StudioProject) error
			want   map[string][]string // company -> its projects
		}{
			{
				name:   "put again unchanged",
				change: func(tx sim.Tx, a sim.StudioProject) error { return tx.StudioProjects().Put(a) },
				want:   map[string][]string{"c1": {"a", "b"}, "c2": {"c"}},
			},
			{
				name: "other fields changed",
				change: func(tx sim.Tx, a sim.StudioProject) error {
					a.Name, a.FolderID = "renamed", ""
					return tx.StudioProjects().Put(a)
				},
				want: map[string][]string{"c1": {"a", "b"}, "c2": {"c"}},
			},
			{
				name: "moved to another company",
				change: func(tx sim.Tx, a sim.StudioProject) error {
					a.CompanyID = "c2"
					return tx.StudioProjects().Put(a)
				},
				want: map[string][]string{"c1": {"b"}, "c2": {"a", "c"}},
			},
			{
				name: "moved to a new company",
				change: func(tx sim.Tx, a sim.StudioProject) error {
					a.CompanyID = "c3"
					return tx.StudioProjects().Put(a)
				},
				want: map[string][]string{"c1": {"b"}, "c2": {"c"}, "c3": {"a"}},
			},
			{
				name: "moved many times, then back",
				change: func(tx sim.Tx, a sim.StudioProject) error {
					for _, c := range []string{"c2", "c3", "c4", "c1"} {
						a.CompanyID = c
						if err := tx.StudioProjects().Put(a); err != nil {
							return err
						}
					}
					return nil
				},
				want: map[string][]string{"c1": {"a", "b"}, "c2": {"c"}, "c3": nil, "c4": nil},
			},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				s := open(t)
				a := studioProject("a", "c1")
				update(t, s, func(tx sim.Tx) error {
					return errors.Join(tx.StudioProjects().Put(a), tx.StudioProjects().Put(studioProject("b", "c1")), tx.StudioProjects().Put(studioProject("c", "c2")))
				})
				update(t, s, func(tx sim.Tx) error { return tc.change(tx, a) })
				for companyID, want := range tc.want {
					assert.Equal(t, want, studioProjectIDs(t, s, companyID), "company %s", companyID)
				}
				assert.Equal(t, 3, count(t, s, bStudioProjectsCo), "one index entry per project (stale ones count too)")
			})
		}
	})
}

func TestForEachVideoByProject(t *testing.T) {
	t.Parallel()
	contract(t, func(t *testing.T, open opener) {
		s := open(t)
		update(t, s, func(tx sim.Tx) error {
			return errors.Join(
				tx.Videos().Put(video("v2", "p1", time.Time{})),
				tx.Videos().Put(video("v1", "p1", t0)),
				tx.Videos().Put(video("v3", "p2", time.Time{})),
				tx.Videos().Put(video("v4", "p10", time.Time{})),
			)
		})
		cases := []struct {
			name      string
			projectID string
			want      []string
		}{
			{"one project, in id order", "p1", []string{"v1", "v2"}},
			{"another project", "p2", []string{"v3"}},
			{"p1 is not a prefix of p10", "p10", []string{"v4"}},
			{"unknown project", "p9", nil},
			{"every project", "", []string{"v1", "v2", "v3", "v4"}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				assert.Equal(t, tc.want, videoIDs(t, s, tc.projectID))
			})
		}

		t.Run("move to another project", func(t *testing.T) {
			t.Parallel()
			s := open(t)
			v := video("v1", "p1", time.Time{})
			update(t, s, func(tx sim.Tx) error { return tx.Videos().Put(v) })
			v.ProjectID = "p2"
			update(t, s, func(tx sim.Tx) error { return tx.Videos().Put(v) })
			assert.Empty(t, videoIDs(t, s, "p1"))
			assert.Equal(t, []string{"v1"}, videoIDs(t, s, "p2"))
			assert.Equal(t, 1, count(t, s, bVideosByProject))
		})

		t.Run("the walk stops at the callback's error", func(t *testing.T) {
			t.Parallel()
			stop := errors.New("stop")
			n := 0
			err := s.View(context.Background(), func(tx sim.Tx) error {
				return tx.ForEachVideo("p1", func(sim.Video) error { n++; return stop })
			})
			assert.ErrorIs(t, err, stop)
			assert.Equal(t, 1, n)
		})

		t.Run("the callback may write", func(t *testing.T) {
			t.Parallel()
			s := open(t)
			update(t, s, func(tx sim.Tx) error {
				for i := range 50 {
					if err := tx.Videos().Put(video(fmt.Sprintf("v%02d", i), "p1", t0)); err != nil {
						return err
					}
				}
				return nil
			})
			// Every visited video moves to another project and due time.
			n := 0
			update(t, s, func(tx sim.Tx) error {
				return tx.ForEachVideo("p1", func(v sim.Video) error {
					n++
					v.ProjectID, v.DueAt = "p2", t0.Add(time.Duration(n)*time.Second)
					return tx.Videos().Put(v)
				})
			})
			assert.Equal(t, 50, n, "each video visited once")
			assert.Empty(t, videoIDs(t, s, "p1"))
			assert.Len(t, videoIDs(t, s, "p2"), 50)
			assert.Equal(t, 50, count(t, s, bVideosByProject))
			assert.Equal(t, 50, count(t, s, bVideosDue))
		})
	})
}

func TestUserByEmail(t *testing.T) {
	t.Parallel()
	contract(t, func(t *testing.T, open opener) {
		s := open(t)
		update(t, s, func(tx sim.Tx) error {
			return errors.Join(
				tx.Users().Put(user("u1", "c1", "Ann@Example.com")),
				tx.Users().Put(user("u2", "c1", "bob@example.com")),
				tx.Users().Put(user("u3", "c2", "")),
				tx.Users().Put(user("u4", "c2", "")), // users without email do not collide
			)
		})
		cases := []struct {
			name   string
			email  string
			wantID string // "" for not found
		}{
			{"as stored", "Ann@Example.com", "u1"},
			{"lower case", "ann@example.com", "u1"},
			{"upper case", "ANN@EXAMPLE.COM", "u1"},
			{"stored in lower case, asked in mixed case", "Bob@Example.COM", "u2"},
			{"unknown", "carol@example.com", ""},
			{"empty", "", ""},
			{"surrounding spaces are not ignored", " ann@example.com", ""},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				view(t, s, func(tx sim.Tx) error {
					u, err := tx.UserByEmail(tc.email)
					if tc.wantID == "" {
						assert.ErrorIs(t, err, sim.ErrNotFound)
						return nil
					}
					require.NoError(t, err)
					assert.Equal(t, tc.wantID, u.ID)
					return nil
				})
			})
		}
		assert.Equal(t, 2, count(t, s, bUsersByEmail), "users without email are not indexed")
	})
}

func TestUserEmailIndexFollowsPuts(t *testing.T) {
	t.Parallel()
	contract(t, func(t *testing.T, open opener) {
		cases := []struct {
			name string
			// change is applied to "a" (a@example.com); "b" (b@example.com)
			// is untouched.
			change    func(tx sim.Tx, a sim.User) error
			wantErr   string
			want      map[string]string // email -> user id, "" for not found
			wantIndex int
		}{
			{
				name:   "put again unchanged",
				change: func(tx sim.Tx, a sim.User) error { return tx.Users().Put(a) },
				want:   map[string]string{"a@example.com": "a", "b@example.com": "b"}, wantIndex: 2,
			},
			{
				name: "email changed",
				change: func(tx sim.Tx, a sim.User) error {
					a.Email = "new@example.com"
					return tx.Users().Put(a)
				},
				want: map[string]string{"a@example.com": "", "new@example.com": "a", "b@example.com": "b"}, wantIndex: 2,
			},
			{
				name: "only the case changed",
				change: func(tx sim.Tx, a sim.User) error {
					a.Email = "A@Example.com"
					return tx.Users().Put(a)
				},
				want: map[string]string{"a@example.com": "a", "A@EXAMPLE.COM": "a", "b@example.com": "b"}, wantIndex: 2,
			},
			{
				name: "email cleared",
				change: func(tx sim.Tx, a sim.User) error {
					a.Email = ""
					return tx.Users().Put(a)
				},
				want: map[string]string{"a@example.com": "", "b@example.com": "b"}, wantIndex: 1,
			},
			{
				name: "email freed by one user, taken by another",
				change: func(tx sim.Tx, a sim.User) error {
					a.Email = "a2@example.com"
					if err := tx.Users().Put(a); err != nil {
						return err
					}
					return tx.Users().Put(user("c", "c1", "A@example.com"))
				},
				want: map[string]string{"a@example.com": "c", "a2@example.com": "a", "b@example.com": "b"}, wantIndex: 3,
			},
			{
				name: "another user's email",
				change: func(tx sim.Tx, a sim.User) error {
					a.Email = "b@example.com"
					return tx.Users().Put(a)
				},
				wantErr: "already belongs to b",
				want:    map[string]string{"a@example.com": "a", "b@example.com": "b"}, wantIndex: 2,
			},
			{
				name: "another user's email in another case",
				change: func(tx sim.Tx, a sim.User) error {
					a.Email = "B@EXAMPLE.com"
					return tx.Users().Put(a)
				},
				wantErr: "already belongs to b",
				want:    map[string]string{"a@example.com": "a", "b@example.com": "b"}, wantIndex: 2,
			},
			{
				name:      "a new user with a taken email",
				change:    func(tx sim.Tx, a sim.User) error { return tx.Users().Put(user("c", "c1", "a@EXAMPLE.com")) },
				wantErr:   "already belongs to a",
				want:      map[string]string{"a@example.com": "a", "b@example.com": "b"},
				wantIndex: 2,
			},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				s := open(t)
				a := user("a", "c1", "a@example.com")
				update(t, s, func(tx sim.Tx) error {
					return errors.Join(tx.Users().Put(a), tx.Users().Put(user("b", "c1", "b@example.com")))
				})
				// The transaction commits whatever the change returns, so a
				// refused put must have written nothing.
				update(t, s, func(tx sim.Tx) error {
					err := tc.change(tx, a)
					if tc.wantErr == "" {
						return err
					}
					require.Error(t, err)
					assert.Contains(t, err.Error(), tc.wantErr)
					return nil
				})
				view(t, s, func(tx sim.Tx) error {
					for email, wantID := range tc.want {
						u, err := tx.UserByEmail(email)
						if wantID == "" {
							assert.ErrorIs(t, err, sim.ErrNotFound, email)
							continue
						}
						if assert.NoError(t, err, email) {
							assert.Equal(t, wantID, u.ID, email)
						}
					}
					if tc.wantErr != "" {
						got, err := tx.Users().Get("a")
						require.NoError(t, err)
						assert.Equal(t, a, got, "the refused put left the user as it was")
						_, err = tx.Users().Get("c")
						assert.ErrorIs(t, err, sim.ErrNotFound)
					}
					return nil
				})
				assert.Equal(t, tc.wantIndex, count(t, s, bUsersByEmail), "index entries (stale ones count too)")
			})
		}
	})
}

// dueKind is a resource with a due index, for the tests both share.
type dueKind struct {
	name   string
	bucket []byte
	put    func(tx sim.Tx, id string, due time.Time) error
	due    func(tx sim.Tx, now time.Time, limit int) ([]string, error)
}

var dueKinds = []dueKind{
	{
		name: "videos", bucket: bVideosDue,
		put: func(tx sim.Tx, id string, due time.Time) error { return tx.Videos().Put(video(id, "p1", due)) },
		due: func(tx sim.Tx, now time.Time, limit int) ([]string, error) { return tx.DueVideos(now, limit) },
	},
	{
		name: "artifacts", bucket: bArtifactsDue,
		put: func(tx sim.Tx, id string, due time.Time) error { return tx.Artifacts().Put(artifact(id, due)) },
		due: func(tx sim.Tx, now time.Time, limit int) ([]string, error) { return tx.DueArtifacts(now, limit) },
	},
}

func TestDueVideosAndArtifacts(t *testing.T) {
	t.Parallel()
	contract(t, func(t *testing.T, open opener) {
		y3000 := time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)
		y1900 := time.Date(1900, 6, 1, 0, 0, 0, 0, time.UTC)
		records := map[string]time.Time{
			"x3":     t0.Add(3 * time.Minute),
			"x1":     t0.Add(time.Minute),
			"x2b":    t0.Add(2 * time.Minute),
			"x2a":    t0.Add(2 * time.Minute),
			"x2ns":   t0.Add(2*time.Minute + time.Nanosecond),
			"future": t0.Add(time.Hour),
			"y3000":  y3000,
			"y1900":  y1900,
			"zoned":  t0.Add(90 * time.Second).In(time.FixedZone("X", 3600)),
			"nodue":  {},
		}
		cases := []struct {
			name  string
			now   time.Time
			limit int
			want  []string
		}{
			{"before everything", y1900.Add(-time.Nanosecond), 10, nil},
			{"before 1970", t0, 10, []string{"y1900"}},
			{"exactly at a due time", t0.Add(time.Minute), 10, []string{"y1900", "x1"}},
			{"a time zone does not change the order", t0.Add(90 * time.Second), 10, []string{"y1900", "x1", "zoned"}},
			{"inclusive, same due time ordered by id", t0.Add(2 * time.Minute), 10, []string{"y1900", "x1", "zoned", "x2a", "x2b"}},
			{"one nanosecond later", t0.Add(2*time.Minute + time.Nanosecond), 10, []string{"y1900", "x1", "zoned", "x2a", "x2b", "x2ns"}},
			{"limit", t0.Add(time.Hour), 3, []string{"y1900", "x1", "zoned"}},
			{"limit one", t0.Add(time.Hour), 1, []string{"y1900"}},
			{"limit zero", t0.Add(time.Hour), 0, nil},
			{"negative limit", t0.Add(time.Hour), -1, nil},
			{"year 2999 does not reach year 3000", time.Date(2999, 12, 31, 23, 59, 59, 999_999_999, time.UTC), 100, []string{"y1900", "x1", "zoned", "x2a", "x2b", "x2ns", "x3", "future"}},
			{"year 3000, after 2025", y3000, 100, []string{"y1900", "x1", "zoned", "x2a", "x2b", "x2ns", "x3", "future", "y3000"}},
			{"now in another zone", t0.Add(time.Minute).In(time.FixedZone("Y", -5*3600)), 10, []string{"y1900", "x1"}},
		}
		for _, k := range dueKinds {
			t.Run(k.name, func(t *testing.T) {
				t.Parallel()
				s := open(t)
				update(t, s, func(tx sim.Tx) error {
					for id, due := range records {
						if err := k.put(tx, id, due); err != nil {
							return err
						}
					}
					return nil
				})
				assert.Equal(t, len(records)-1, count(t, s, k.bucket), "only records with a due time are indexed")
				for _, tc := range cases {
					t.Run(tc.name, func(t *testing.T) {
						t.Parallel()
						view(t, s, func(tx sim.Tx) error {
							got, err := k.due(tx, tc.now, tc.limit)
							require.NoError(t, err)
							assert.Equal(t, tc.want, got)
							return nil
						})
					})
				}
			})
		}
	})
}

func TestDueIndexFollowsVideosAndArtifacts(t *testing.T) {
	t.Parallel()
	contract(t, func(t *testing.T, open opener) {
		later := t0.Add(time.Hour)
		cases := []struct {
			name string
			// change is applied to "a" (due t0+1m); "b" (due t0+2m) is untouched.
			change    func(tx sim.Tx, k dueKind) error
			wantDue   []string // due at t0+1h
			wantIndex int
		}{
			{
				name:    "put again unchanged",
				change:  func(tx sim.Tx, k dueKind) error { return k.put(tx, "a", t0.Add(time.Minute)) },
				wantDue: []string{"a", "b"}, wantIndex: 2,
			},
			{
				name:    "moved after b",
				change:  func(tx sim.Tx, k dueKind) error { return k.put(tx, "a", t0.Add(3*time.Minute)) },
				wantDue: []string{"b", "a"}, wantIndex: 2,
			},
			{
				name:    "moved later than now",
				change:  func(tx sim.Tx, k dueKind) error { return k.put(tx, "a", later.Add(time.Nanosecond)) },
				wantDue: []string{"b"}, wantIndex: 2,
			},
			{
				name:    "moved to year 3000",
				change:  func(tx sim.Tx, k dueKind) error { return k.put(tx, "a", time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)) },
				wantDue: []string{"b"}, wantIndex: 2,
			},
			{
				name:    "due time cleared",
				change:  func(tx sim.Tx, k dueKind) error { return k.put(tx, "a", time.Time{}) },
				wantDue: []string{"b"}, wantIndex: 1,
			},
			{
				name: "cleared, then set again",
				change: func(tx sim.Tx, k dueKind) error {
					return errors.Join(k.put(tx, "a", time.Time{}), k.put(tx, "a", t0.Add(30*time.Minute)))
				},
				wantDue: []string{"b", "a"}, wantIndex: 2,
			},
			{
				name:    "a new record without due time",
				change:  func(tx sim.Tx, k dueKind) error { return k.put(tx, "c", time.Time{}) },
				wantDue: []string{"a", "b"}, wantIndex: 2,
			},
			{
				name: "moved many times",
				change: func(tx sim.Tx, k dueKind) error {
					for i := range 10 {
						if err := k.put(tx, "a", t0.Add(time.Duration(10+i)*time.Minute)); err != nil {
							return err
						}
					}
					return nil
				},
				wantDue: []string{"b", "a"}, wantIndex: 2,
			},
		}
		for _, k := range dueKinds {
			for _, tc := range cases {
				t.Run(k.name+"/"+tc.name, func(t *testing.T) {
					t.Parallel()
					s := open(t)
					update(t, s, func(tx sim.Tx) error {
						return errors.Join(k.put(tx, "a", t0.Add(time.Minute)), k.put(tx, "b", t0.Add(2*time.Minute)))
					})
					update(t, s, func(tx sim.Tx) error { return tc.change(tx, k) })
					view(t, s, func(tx sim.Tx) error {
						got, err := k.due(tx, later, 100)
						require.NoError(t, err)
						assert.Equal(t, tc.wantDue, got)
						return nil
					})
					assert.Equal(t, tc.wantIndex, count(t, s, k.bucket), "index entries (stale ones count too)")
				})
			}
		}
	})
}

func TestResetDataClearsStudio(t *testing.T) {
	t.Parallel()
	contract(t, func(t *testing.T, open opener) {
		s := open(t)
		update(t, s, putStudio)
		for _, b := range studioData {
			require.NotZero(t, count(t, s, b), "bucket %s is filled before the reset", b)
		}
		update(t, s, func(tx sim.Tx) error { return tx.ResetData() })
		for _, b := range studioData {
			assert.Zero(t, count(t, s, b), "bucket %s", b)
		}
		view(t, s, func(tx sim.Tx) error {
			for name, err := range map[string]error{
				"company":       second(tx.Companies().Get("c1")),
				"user":          second(tx.Users().Get("u1")),
				"user by email": second(tx.UserByEmail("ann@example.com")),
				"glossary":      second(tx.Glossaries().Get("g1")),
				"folder":        second(tx.Folders().Get("f1")),
				"project":       second(tx.StudioProjects().Get("sp1")),
				"video":         second(tx.Videos().Get("v1")),
				"artifact":      second(tx.Artifacts().Get("a1")),
				"upload":        second(tx.Uploads().Get("up1")),
			} {
				assert.ErrorIs(t, err, sim.ErrNotFound, name)
			}
			videos, err := tx.DueVideos(t0.Add(time.Hour), 10)
			require.NoError(t, err)
			assert.Empty(t, videos)
			artifacts, err := tx.DueArtifacts(t0.Add(time.Hour), 10)
			require.NoError(t, err)
			assert.Empty(t, artifacts)
			return nil
		})
		assert.Empty(t, studioProjectIDs(t, s, "c1"))
		assert.Empty(t, videoIDs(t, s, "sp1"))
		// The store is usable after a reset, and the old email is free.
		update(t, s, func(tx sim.Tx) error { return tx.Users().Put(user("u2", "c1", "ann@example.com")) })
		view(t, s, func(tx sim.Tx) error {
			u, err := tx.UserByEmail("ANN@example.com")
			require.NoError(t, err)
			assert.Equal(t, "u2", u.ID)
			return nil
		})
	})
}

func second[T any](_ T, err error) error { return err }

func TestUnreadableStudioValues(t *testing.T) {
	t.Parallel()
	contract(t, func(t *testing.T, open opener) {
		const raw = `{"v":2,"d":{}}`
		cases := []struct {
			name   string
			bucket []byte
			key    []byte
			val    []byte
			read   func(sim.Tx) error
			want   error // nil: an unreadable value
		}{
			{"company", bCompanies, []byte("bad"), []byte(raw), func(tx sim.Tx) error { _, err := tx.Companies().Get("bad"); return err }, nil},
			{"user overwrite", bUsers, []byte("bad"), []byte(raw), func(tx sim.Tx) error { return tx.Users().Put(user("bad", "c1", "x@y.z")) }, nil},
			{"video overwrite", bVideos, []byte("bad"), []byte(raw), func(tx sim.Tx) error { return tx.Videos().Put(video("bad", "p1", t0)) }, nil},
			{"artifacts", bArtifacts, []byte("bad"), []byte(raw), func(tx sim.Tx) error {
				return tx.Artifacts().ForEach(func(sim.Artifact) error { return nil })
			}, nil},
			{"videos of a project", bVideosByProject, parentKey("p1", "gone"), nil, func(tx sim.Tx) error {
				return tx.ForEachVideo("p1", func(sim.Video) error { return nil })
			}, errIndexedNotFound},
			{"user by email", bUsersByEmail, []byte("x@y.z"), []byte("gone"), func(tx sim.Tx) error {
				_, err := tx.UserByEmail("x@y.z")
				return err
			}, errIndexedNotFound},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				s := open(t)
				require.NoError(t, s.kv.update(func(tx kvTx) error { return tx.put(tc.bucket, tc.key, tc.val) }))
				var err error
				require.NotPanics(t, func() { err = s.Update(context.Background(), tc.read) })
				require.Error(t, err)
				assert.NotErrorIs(t, err, sim.ErrNotFound, "a corrupt file is not a missing record")
				if tc.want != nil {
					assert.ErrorIs(t, err, tc.want)
				} else {
					assert.Contains(t, err.Error(), "value version 2")
				}
			})
		}
	})
}
