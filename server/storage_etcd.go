package server

import (
	"context"
	"fmt"

	"platd/bolt"
	"platd/config"
)

// openEtcd opens the etcd engine of --etcd-servers.
func openEtcd(context.Context, *Server, bolt.Transformer) (bolt.Store, error) {
	return nil, fmt.Errorf("%w: --storage-backend=%s: this build has no etcd engine", config.ErrInvalid, config.StorageBackendETCD3)
}
