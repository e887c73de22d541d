// Command goclient is the program generators_test.go builds in a module of
// its own, next to the clients oapi-codegen generates there from the
// platform and studio documents a running dubsim serves (the packages
// platformclient and studioclient): it makes requests with them against
// that dubsim (os.Args[1]) and prints what it saw as one JSON object.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"

	"example.com/generated/platformclient"
	"example.com/generated/studioclient"
)

type seen struct {
	PlatformProject   string `json:"platform_project"`
	CostMinutes       int    `json:"cost_minutes"`
	Status            string `json:"status"`
	Name              string `json:"name"`
	FrenchVoices      int    `json:"french_voices"`
	StudioProject     string `json:"studio_project"`
	StudioName        string `json:"studio_name"`
	StudioListHasIt   bool   `json:"studio_list_has_it"`
	UnknownKeyRefused int    `json:"unknown_key_status"`
}

func bearer(key string) func(context.Context, *http.Request) error {
	return func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+key)
		return nil
	}
}

func main() {
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "goclient:", err)
		os.Exit(1)
	}
}

func run(base string) error {
	ctx := context.Background()
	var s seen
	p, err := platformclient.NewClientWithResponses(base, platformclient.WithRequestEditorFn(bearer("dubsim-subscription")))
	if err != nil {
		return err
	}
	name := "My Project"
	created, err := p.CreateProjectWithResponse(ctx, &platformclient.CreateProjectParams{}, platformclient.CreateProjectRequest{
		Name: &name, SourceLang: "en", TargetLang: "fr-FR", SourceVideoUrl: "https://example.com/video.mp4",
	})
	if err != nil {
		return err
	}
	if created.JSON200 == nil {
		return fmt.Errorf("create project: %d %s", created.StatusCode(), created.Body)
	}
	s.PlatformProject, s.CostMinutes = created.JSON200.ProjectId, created.JSON200.CostMinutes

	got, err := p.GetProjectWithResponse(ctx, s.PlatformProject)
	if err != nil {
		return err
	}
	if got.JSON200 == nil {
		return fmt.Errorf("get project: %d %s", got.StatusCode(), got.Body)
	}
	if s.Status, err = got.JSON200.Discriminator(); err != nil {
		return err
	}
	inProgress, err := got.JSON200.AsProjectInProgress()
	if err != nil {
		return err
	}
	s.Name = inProgress.Name

	voices, err := p.GetVoicesWithResponse(ctx)
	if err != nil {
		return err
	}
	if voices.JSON200 == nil {
		return fmt.Errorf("voices: %d %s", voices.StatusCode(), voices.Body)
	}
	s.FrenchVoices = len(voices.JSON200.Voices["fr-FR"])

	stranger, err := platformclient.NewClientWithResponses(base, platformclient.WithRequestEditorFn(bearer("no-such-key")))
	if err != nil {
		return err
	}
	refused, err := stranger.GetProjectWithResponse(ctx, s.PlatformProject)
	if err != nil {
		return err
	}
	if refused.JSON401 == nil {
		return fmt.Errorf("unknown key: %d %s", refused.StatusCode(), refused.Body)
	}
	s.UnknownKeyRefused = refused.StatusCode()

	st, err := studioclient.NewClientWithResponses(base, studioclient.WithRequestEditorFn(bearer("dubsim-free")))
	if err != nil {
		return err
	}
	sp, err := st.StudioCreateProjectWithResponse(ctx, &studioclient.StudioCreateProjectParams{}, studioclient.CreateProjectRequest{Name: "Launch"})
	if err != nil {
		return err
	}
	project := sp.JSON200
	if project == nil {
		project = sp.JSON201
	}
	if project == nil {
		return fmt.Errorf("studio create project: %d %s", sp.StatusCode(), sp.Body)
	}
	s.StudioProject = project.Id
	sg, err := st.StudioGetProjectWithResponse(ctx, s.StudioProject)
	if err != nil {
		return err
	}
	if sg.JSON200 == nil {
		return fmt.Errorf("studio get project: %d %s", sg.StatusCode(), sg.Body)
	}
	s.StudioName = sg.JSON200.Name
	list, err := st.StudioListProjectsWithResponse(ctx)
	if err != nil {
		return err
	}
	if list.JSON200 == nil {
		return fmt.Errorf("studio list projects: %d %s", list.StatusCode(), list.Body)
	}
	for _, sp := range *list.JSON200 {
		s.StudioListHasIt = s.StudioListHasIt || sp.Id == s.StudioProject
	}
	return json.NewEncoder(os.Stdout).Encode(s)
}
