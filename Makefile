# Reasonix build targets. Every binary is static (CGO_ENABLED=0) and carries
# its version from `git describe`.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
GO      ?= go
BIN     ?= bin
PLATFORMS := darwin/amd64 darwin/arm64 linux/amd64 linux/arm64 windows/amd64 windows/arm64

.PHONY: build cross vet fmt test bench proto mutants clean

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN)/reasonix ./cmd/reasonix

cross:
	@for p in $(PLATFORMS); do \
		os=$${p%/*}; arch=$${p#*/}; ext=; [ $$os = windows ] && ext=.exe; \
		echo "build $$os/$$arch"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags "$(LDFLAGS)" \
			-o $(BIN)/reasonix-$$os-$$arch$$ext ./cmd/reasonix || exit 1; \
	done

vet:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

fmt:
	gofmt -w $$(git ls-files '*.go')

# The test command README.md gives; .ci/run calls exactly this.
test:
	$(GO) test -race -count=1 ./...

bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...

# Regenerates actors/workerpb/worker.pb.go from worker.proto with protoc
# (apt install protobuf-compiler) and the protoc-gen-go of the protobuf
# version go.mod pins, built from the module cache. The .proto is named
# by its path from the module root, the name protobuf registers it under,
# so it cannot clash with another file of the same base name in a binary.
# Commit the result; actors/workerpb/generate_test.go fails while it is
# stale.
proto:
	tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(GO) build -o "$$tmp/protoc-gen-go" google.golang.org/protobuf/cmd/protoc-gen-go && \
	protoc --plugin=protoc-gen-go="$$tmp/protoc-gen-go" --proto_path=. \
		--go_out=. --go_opt=paths=source_relative actors/workerpb/worker.proto

clean:
	rm -rf $(BIN)

# Applies each one-line change in cmd/reasonix-mutants/mutants.tsv to a copy
# of the tree and runs the tests named for it; every change must be killed
# (docs/TESTING.md). Slow, so not part of the test command.
mutants:
	$(GO) run ./cmd/reasonix-mutants
