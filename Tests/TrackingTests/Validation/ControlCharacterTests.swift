import Foundation
import Testing
@testable import Tracking

/// Control characters in event fields are refused naming the field (a
/// statistics table printing them would drive the terminal); bidi marks are
/// text in right-to-left languages and are accepted (escaped where printed).
@Suite("Event validation: control characters")
struct ControlCharacterTests {
    static func event(_ change: (inout TrackingEvent) -> Void) -> TrackingEvent { EventValidatorTests.event(change) }

    @Test("ESC, BEL, NUL, CR, LF, DEL and C1 controls are refused naming the field", arguments: [
        ("\u{1B}]0;pwned\u{07}", "pid"), ("a\u{0}b", "pid"), ("row\r\nforged", "pid"), ("x\u{7F}", "pid"), ("x\u{9B}31m", "pid"),
    ])
    func refused(value: String, field: String) {
        #expect(throws: TrackingError.self) { try EventValidator.validate(Self.event { $0.pid = value }) }
        do { try EventValidator.validate(Self.event { $0.pid = value }) } catch {
            #expect(error.description.contains(field) && error.description.contains("control character"), "\(error)")
        }
    }

    @Test("every text field is checked, the custom JSON too")
    func everyField() {
        for field in ["label", "name", "s1", "uid", "sid", "queryId", "category", "json"] {
            let event = Self.event { event in
                switch field {
                case "label": event.label = "a\u{1B}"
                case "name": event.name = "a\u{7}"
                case "s1": event.s1 = "a\n"
                case "uid": event.uid = "a\r"
                case "sid": event.sid = "a\u{0}"
                case "queryId": event.queryId = "1\u{1B}[2J"
                case "category": event.category = "\u{85}"
                default: event.json = "\"a\u{1B}\""
                }
            }
            do { try EventValidator.validate(event); Issue.record("\(field) with a control character was accepted") } catch {
                #expect(error.description.contains(field), "\(error)")
            }
        }
    }

    @Test("bidi marks and overrides are accepted, and JSON may hold tab, CR and LF between its tokens")
    func accepted() throws {
        try EventValidator.validate(Self.event { $0.name = "\u{5E9}\u{5DC}\u{5D5}\u{5DD}\u{200F}"; $0.pid = "p\u{202E}x" })
        try EventValidator.validate(Self.event { $0.json = "{\n\t\"a\": 1\r\n}" })
    }
}
