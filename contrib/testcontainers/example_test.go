package dubsim_test

import (
	"context"
	"fmt"
	"log"
	"time"

	dubsim "github.com/dubsim/dubsim/contrib/testcontainers"
)

// Start the image, drive its clock through the control client, terminate
// it. (Not run by go test: it needs Docker and the image; TestRun runs the
// same steps and skips without Docker.)
func ExampleRun() {
	ctx := context.Background()
	ctr, err := dubsim.Run(ctx, dubsim.DefaultImage, dubsim.WithSeed(7))
	defer func() {
		if ctr != nil {
			_ = ctr.Terminate(ctx)
		}
	}()
	if err != nil {
		log.Fatal(err)
	}
	base, err := ctr.URL(ctx) // both interfaces, routed by path and body
	if err != nil {
		log.Fatal(err)
	}
	platformURL, err := ctr.PlatformURL(ctx) // point the client under test here
	if err != nil {
		log.Fatal(err)
	}
	studioURL, err := ctr.StudioURL(ctx) // and a studio client here
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("platform API at", platformURL, "studio API at", studioURL, "both at", base)

	sim, err := ctr.Client(ctx) // or dubsimtest.NewClient(base), for the whole control API
	if err != nil {
		log.Fatal(err)
	}
	now, err := sim.Advance(ctx, time.Hour)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("simulated time is now", now)
}
