// The pod sandbox ("pause") image's only program, for a node that can pull no image: it holds
// the Pod's namespaces open by waiting until it is told to stop, and reaps the zombies of
// processes that end inside them, as the upstream pause program does. Built static
// (CGO_ENABLED=0) by test/cluster/node-images.sh.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	children := make(chan os.Signal, 16)
	signal.Notify(children, syscall.SIGCHLD)
	for {
		select {
		case <-stop:
			os.Exit(0)
		case <-children:
			for {
				pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
				if pid <= 0 || err != nil {
					break
				}
			}
		}
	}
}
