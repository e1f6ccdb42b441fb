@testable import ParlanceLSP
import ParlanceFeatures
import XCTest

/// The rewrite code actions without a tone keep the selection's own: formal or casual as
/// its language marks it, not as English would score its words.
final class RewriterToneTests: XCTestCase {
    func testTheSelectionsOwnToneIsReadInItsLanguage() {
        let casualSpanish = "Oye, ¿me pasas la documentación que hicimos ayer? Tenemos que revisarla antes de la presentación del lunes, porfa."
        let formalSpanish = "Estimado señor García: le ruego que nos remita el informe antes del viernes. Atentamente."
        let casualFrench = "Salut, t'inquiète pas, on finalise la documentation demain et on t'envoie tout, ok ?"
        XCTAssertEqual(Rewriter.ownTone(casualSpanish, language: nil), .casual)
        XCTAssertEqual(Rewriter.ownTone(formalSpanish, language: nil), .formal)
        XCTAssertEqual(Rewriter.ownTone(casualFrench, language: nil), .casual)
        XCTAssertEqual(Rewriter.ownTone(casualSpanish, language: "es-es"), .casual, "the configured language")
        XCTAssertEqual(Rewriter.ownTone("hey, can u send me the deck? thx", language: nil), .casual)
        XCTAssertEqual(Rewriter.ownTone("Kindly ensure the quarterly report is submitted by Friday.", language: nil), .formal)
        // What the English score alone made of the Spanish letter: a casual rewrite of it.
        XCTAssertLessThan(Formality.score(formalSpanish), 0.5, "the English score no longer misreads it: pick another example")
    }
}
