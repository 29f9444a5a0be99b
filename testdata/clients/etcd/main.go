// Command etcd is the etcd server of the version platd's etcd backend is
// built against, for tests that start etcd as a process (controller-runtime's
// envtest starts the etcd binary beside kube-apiserver).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
