// Package statemachine holds the lifecycle rules as pure functions of (resource, now): Next and due
// times of projects, artifacts and videos, re-translation and access checks; it imports sim only.
package statemachine
