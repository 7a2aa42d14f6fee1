// The workbench's file rules (apps/handoff/live/files.h): what a request may name, what an upload
// may be, where it goes.
#include "live/files.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace handoff::live {
namespace {

namespace fs = std::filesystem;

void writeFile(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

/// root/               (the data folder)
///   deepmimic/run.bvh
///   .hidden.bvh
///   notes.txt
///   a/b/c/d/e/deep.bvh   (5 folders down)
///   out.bvh  -> ../outside/secret.bvh   (symlink out)
///   alias.bvh -> deepmimic/run.bvh      (symlink inside)
/// outside/secret.bvh
class FilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<TempFolder> t = TempFolder::create("handoff-files-test-");
    ASSERT_TRUE(t) << t.error();
    temp_.emplace(std::move(t).value());
    root_ = temp_->path() / "root";
    writeFile(root_ / "deepmimic" / "run.bvh", "HIERARCHY\n");
    writeFile(root_ / ".hidden.bvh", "HIERARCHY\n");
    writeFile(root_ / "notes.txt", "text\n");
    writeFile(root_ / "a" / "b" / "c" / "d" / "e" / "deep.bvh", "HIERARCHY\n");
    writeFile(temp_->path() / "outside" / "secret.bvh", "secret\n");
    fs::create_symlink("../outside/secret.bvh", root_ / "out.bvh");
    fs::create_symlink("deepmimic/run.bvh", root_ / "alias.bvh");
  }
  std::optional<TempFolder> temp_;
  fs::path root_;
};

TEST_F(FilesTest, ResolveInsideAcceptsFilesOfTheFolder) {
  Result<fs::path> run = resolveInside(root_, "deepmimic/run.bvh");
  ASSERT_TRUE(run) << run.error();
  EXPECT_EQ(*run, fs::canonical(root_ / "deepmimic" / "run.bvh"));
  // A symlink that stays inside resolves to its target.
  Result<fs::path> alias = resolveInside(root_, "alias.bvh");
  ASSERT_TRUE(alias) << alias.error();
  EXPECT_EQ(*alias, *run);
}

TEST_F(FilesTest, ResolveInsideRefusesEverythingElseOneByOne) {
  const struct {
    std::string name;
    std::string reason;  // part of the message
  } cases[] = {
      {"", "no file named"},
      {"/etc/passwd", "absolute"},
      {(root_ / "deepmimic" / "run.bvh").string(), "absolute"},
      {"../outside/secret.bvh", "'..'"},
      {"deepmimic/../../outside/secret.bvh", "'..'"},
      {"./deepmimic/run.bvh", "'.'"},
      {"deepmimic\\run.bvh", "backslash"},
      {std::string("deepmimic/run.bvh\0x", 19), "NUL"},
      {"deepmimic/missing.bvh", "no such file"},
      {"out.bvh", "outside the data folder"},
      {"deepmimic", "not a regular file"},
  };
  for (const auto& c : cases) {
    Result<fs::path> r = resolveInside(root_, c.name);
    ASSERT_FALSE(r) << "accepted '" << c.name << "'";
    EXPECT_NE(r.error().find(c.reason), std::string::npos) << c.name << ": " << r.error();
  }
  EXPECT_FALSE(resolveInside(temp_->path() / "missing", "x.bvh"));
}

TEST_F(FilesTest, ListsCharacterFilesButNoSymlinksDotFilesOrOthers) {
  const std::vector<DataFile> files = listCharacterFiles(root_, 4);
  std::vector<std::string> paths;
  for (const DataFile& f : files) paths.push_back(f.path);
  // deep.bvh is 5 folders down, past the depth of 4; out.bvh and alias.bvh are symlinks.
  EXPECT_EQ(paths, std::vector<std::string>{"deepmimic/run.bvh"});
  EXPECT_EQ(files[0].size, 10u);
  EXPECT_EQ(listCharacterFiles(root_, 8).size(), 2u);
  EXPECT_TRUE(isCharacterFile("a.BVH") && isCharacterFile("b.glb") && isCharacterFile("c.gltf") &&
              isCharacterFile("d.Fbx") && isCharacterFile("e.dae"));
  EXPECT_FALSE(isCharacterFile("a.json") || isCharacterFile("bvh") || isCharacterFile("a.bvh.txt"));
}

TEST(SafeFileName, KeepsOnlyAPlainName) {
  EXPECT_EQ(*safeFileName("../../etc/passwd"), "passwd");
  EXPECT_EQ(*safeFileName("C:\\Users\\me\\walk cycle.bvh"), "walk_cycle.bvh");
  EXPECT_EQ(*safeFileName("r\xc3\xa9sum\xc3\xa9.glb"), "r__sum__.glb");
  EXPECT_EQ(safeFileName(std::string(200, 'a') + ".bvh")->size(), 96u);
  // Issue 27, finding 14: a long name kept its first 96 characters and lost its extension, so the
  // importer's format checks were skipped.
  EXPECT_EQ(*safeFileName(std::string(100, 'b') + ".glb"), std::string(92, 'b') + ".glb");
  EXPECT_TRUE(isCharacterFile(*safeFileName(std::string(300, 'c') + ".gltf")));
  for (const char* bad : {"", "/", "..", ".hidden.bvh", "___", "dir/"}) {
    EXPECT_FALSE(safeFileName(bad)) << bad;
  }
}

TEST_F(FilesTest, UploadsAreBoundedAndStayInTheirFolder) {
  UploadStore store(temp_->path() / "scratch", 16);
  Result<fs::path> a = store.store("../../run.bvh", "0123456789abcdef");  // exactly the bound
  ASSERT_TRUE(a) << a.error();
  EXPECT_EQ(a->parent_path(), temp_->path() / "scratch" / "uploads");
  EXPECT_EQ(a->filename(), "1-run.bvh");
  std::ifstream in(*a, std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "0123456789abcdef");
  // The same name again: a new file, the first one kept.
  Result<fs::path> b = store.store("run.bvh", "x");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->filename(), "2-run.bvh");
  EXPECT_TRUE(fs::exists(*a));

  Result<fs::path> big = store.store("big.bvh", std::string(17, 'x'));
  ASSERT_FALSE(big);
  EXPECT_NE(big.error().find("17 bytes, more than the 16 bytes allowed"), std::string::npos) << big.error();
  EXPECT_FALSE(store.store("empty.bvh", ""));
  EXPECT_FALSE(store.store(".profile", "x"));
  // Nothing else was written.
  int files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(temp_->path() / "scratch" / "uploads"))
    ++files;
  EXPECT_EQ(files, 2);
  EXPECT_EQ(UploadStore::kDefaultMaxBytes, 64u << 20);
}

// Issue 27, finding 10: uploads were kept for ever, with no total.
TEST_F(FilesTest, UploadsKeptAreBoundedInTotalAndRemovedWhenAsked) {
  UploadStore store(temp_->path() / "scratch", 10, 25);
  Result<fs::path> a = store.store("a.bvh", std::string(10, 'a'));
  Result<fs::path> b = store.store("b.bvh", std::string(10, 'b'));
  ASSERT_TRUE(a && b);
  Result<fs::path> c = store.store("c.bvh", std::string(10, 'c'));
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().find("past 25 bytes"), std::string::npos) << c.error();
  EXPECT_EQ(store.storedBytes(), 20u);
  store.remove(*a);  // refused by the importer
  EXPECT_FALSE(fs::exists(*a));
  c = store.store("c.bvh", std::string(10, 'c'));
  ASSERT_TRUE(c) << c.error();
  store.retainOnly(*c);  // c replaces b
  EXPECT_FALSE(fs::exists(*b));
  EXPECT_TRUE(fs::exists(*c));
  EXPECT_EQ(store.storedBytes(), 10u);
  store.retainOnly({});
  EXPECT_FALSE(fs::exists(*c));
  EXPECT_EQ(store.storedBytes(), 0u);
}

// Issue 27, finding 10: a crash left the scratch folder for good.
TEST(TempFolder, FoldersLeftByACrashAreRemovedOnTheNextStart) {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ::waitpid(child, nullptr, 0);  // a process id that is gone
  const fs::path base = fs::temp_directory_path();
  const fs::path crashed = base / "handoff-stale-test-crashed", alive = base / "handoff-stale-test-alive",
                 unknown = base / "handoff-stale-test-unknown";
  writeFile(crashed / TempFolder::kOwnerFile, std::to_string(child) + "\n");
  writeFile(crashed / "uploads" / "1-big.glb", "x");
  writeFile(alive / TempFolder::kOwnerFile, std::to_string(::getpid()) + "\n");
  writeFile(unknown / "file", "x");
  EXPECT_EQ(TempFolder::removeStale("handoff-stale-test-"), 1);
  EXPECT_FALSE(fs::exists(crashed));
  EXPECT_TRUE(fs::exists(alive));
  EXPECT_TRUE(fs::exists(unknown));
  fs::remove_all(alive);
  fs::remove_all(unknown);
  // A live server's own folder names its process.
  Result<TempFolder> t = TempFolder::create("handoff-stale-test-");
  ASSERT_TRUE(t);
  std::ifstream owner(t->path() / TempFolder::kOwnerFile);
  long pid = 0;
  owner >> pid;
  EXPECT_EQ(pid, ::getpid());
  EXPECT_EQ(TempFolder::removeStale("handoff-stale-test-"), 0);
}

TEST(TempFolder, IsRemovedWithItsContent) {
  fs::path path;
  {
    Result<TempFolder> t = TempFolder::create("handoff-temp-test-");
    ASSERT_TRUE(t) << t.error();
    path = t->path();
    writeFile(path / "a" / "b.txt", "x");
    EXPECT_EQ(fs::status(path).permissions() & fs::perms::all, fs::perms::owner_all);
  }
  EXPECT_FALSE(fs::exists(path));
}

TEST(FormatBytes, ReadsAsAUserWould) {
  EXPECT_EQ(formatBytes(17), "17 bytes");
  EXPECT_EQ(formatBytes(1536), "1.5 KiB");
  EXPECT_EQ(formatBytes(std::uintmax_t{64} << 20), "64.0 MiB");
}

}  // namespace
}  // namespace handoff::live
