// The corpus replay: a main() for a fuzz target built without libFuzzer (the
// gcc sanitizer and release trees), so that `make test` runs every target over
// its checked-in corpus: the seeds and every input that once found a bug.
//
//   <target>_replay CORPUS_DIR
//
// Runs LLVMFuzzerTestOneInput on each file of CORPUS_DIR, then on inputs made
// deterministically from them (truncations and byte flips) and on pseudo-random
// ones, with a fixed seed so a failure reproduces. The target aborts on a
// broken invariant; this program fails when the corpus is missing or empty, so
// a wrong path cannot pass for a clean run.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

constexpr int kRandomInputs = 300;
constexpr int kMutationsPerFile = 20;

using Bytes = std::vector<uint8_t>;

void RunOne(const Bytes& input) {
  // A copy of exactly the input's size: ASan sees any read past its end.
  auto* copy = new uint8_t[input.size() + (input.empty() ? 1 : 0)];
  std::copy(input.begin(), input.end(), copy);
  LLVMFuzzerTestOneInput(copy, input.size());
  delete[] copy;
}

uint64_t Next(uint64_t& state) {  // splitmix64
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(argv[1], ec)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  if (ec || files.empty()) {
    std::fprintf(stderr, "no corpus files in %s\n", argv[1]);
    return 1;
  }
  std::sort(files.begin(), files.end());

  uint64_t state = 0x5eed;
  size_t runs = 0;
  for (const auto& path : files) {
    std::ifstream in(path, std::ios::binary);
    Bytes input((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    RunOne(input);
    ++runs;
    for (int i = 0; i < kMutationsPerFile && !input.empty(); ++i) {
      Bytes mutated = input;
      if (i % 4 == 0) {
        mutated.resize(Next(state) % mutated.size());
      } else {
        for (int flips = 1 + i % 3; flips > 0; --flips) {
          mutated[Next(state) % mutated.size()] ^= static_cast<uint8_t>(1 + Next(state) % 255);
        }
      }
      RunOne(mutated);
      ++runs;
    }
  }
  for (int i = 0; i < kRandomInputs; ++i) {
    Bytes input(Next(state) % 512);
    for (uint8_t& b : input) b = static_cast<uint8_t>(Next(state));
    RunOne(input);
    ++runs;
  }
  std::printf("%zu corpus files, %zu inputs run, no invariant broken\n", files.size(), runs);
  return 0;
}
