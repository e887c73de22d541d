module example.com/consumer

go 1.26.0

require (
	github.com/dubsim/dubsim v0.1.0
	github.com/dubsim/dubsim/contrib/testcontainers v0.1.0
	github.com/stretchr/testify v1.12.1
)
