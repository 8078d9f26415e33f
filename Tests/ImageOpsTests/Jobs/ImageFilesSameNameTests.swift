import ImageOps
import Testing

@Suite("Image files that would share a name")
struct ImageFilesSameNameTests {
    @Test("files that differ only in extension are grouped, each group sorted, in path order; others are not")
    func groups() {
        let files = ["astro.jpg", "b/x.png", "astro.JPG", "b/x.jpg", "c.jpg", "b/y.jpg", "astro.jpeg"]
        #expect(ImageFiles.sameNameGroups(files) == [["astro.JPG", "astro.jpeg", "astro.jpg"], ["b/x.jpg", "b/x.png"]])
    }

    @Test("names that differ in case or folder are different names")
    func distinct() {
        #expect(ImageFiles.sameNameGroups(["Astro.jpg", "astro.jpg", "a/astro.jpg"]).isEmpty)
    }
}
